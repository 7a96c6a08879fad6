// SingleRankCommunicator: with one rank every reduction is the identity (sum, avg and max
// of one value), so reduce_scatter, all_gather and all_to_all copy their input and the rest
// do nothing.
#include "comm/gloo/single_rank_communicator.h"

#include <cstring>

#include "comm/gloo/collective_request.h"
#include "comm/split_requests_internal.h"

namespace zt::comm {
namespace {

void copy_unless_same(const Tensor& from, const Tensor& to, DeviceContext* device) {
  if (from.data() == to.data() || from.numel() == 0) return;
  if (from.device().kind == DeviceKind::kCpu) {
    std::memcpy(to.data(), from.data(), from.nbytes());
  } else {
    device->ops().copy(from, to);  // check_request admitted only tensors on `device`
  }
}

}  // namespace

std::shared_ptr<Work> SingleRankCommunicator::complete(const CollectiveRequest& request) {
  check_request(request, 0, 1, host_and_device_home(device_));
  const std::uint64_t sequence_number = next_sequence_number_.fetch_add(1);
  const std::uint64_t flight_id =
      record_submitted(flight_recorder_.get(), group_name_, sequence_number, request);
  if (flight_id != kNotRecorded) flight_recorder_->started(flight_id);
  DeviceStream* compute = device_ != nullptr ? &device_->compute_stream() : nullptr;
  if (request.kind == CollectiveKind::kReduceScatter ||
      request.kind == CollectiveKind::kAllGather || request.kind == CollectiveKind::kAllToAll) {
    // A host copy reads what the compute stream may still be producing; a device copy is
    // ordered behind it on that stream.
    if (compute != nullptr && request_device(request).kind == DeviceKind::kCpu) {
      compute->record().synchronize();
    }
    copy_unless_same(request.input, request.output, device_);
  }
  auto work =
      std::make_shared<Work>(sequence_number, describe_request(request, sequence_number, 0, 1),
                             timeout_, std::chrono::milliseconds(0), compute);
  counters_.add(request.kind, {});
  if (flight_id != kNotRecorded) flight_recorder_->ended(flight_id);
  work->mark_completed();
  return work;
}

std::unique_ptr<Communicator> SingleRankCommunicator::split_group(const SplitGroup& group) {
  if (group.rank < 0) return nullptr;
  CommOptions options;
  options.timeout = timeout_;
  options.device = device_;
  options.flight_recorder = flight_recorder_;
  options.group_name = split_group_name(group_name_, group);
  return std::make_unique<SingleRankCommunicator>(options);
}

std::shared_ptr<Work> SingleRankCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  return complete({CollectiveKind::kAllReduce, std::move(tensor), {}, op, 0});
}

std::shared_ptr<Work> SingleRankCommunicator::reduce_scatter(Tensor input, Tensor output,
                                                             ReduceOp op) {
  return complete({CollectiveKind::kReduceScatter, std::move(input), std::move(output), op, 0});
}

std::shared_ptr<Work> SingleRankCommunicator::all_gather(Tensor input, Tensor output) {
  return complete(
      {CollectiveKind::kAllGather, std::move(input), std::move(output), ReduceOp::kSum, 0});
}

std::shared_ptr<Work> SingleRankCommunicator::all_to_all(Tensor input, Tensor output) {
  return complete(
      {CollectiveKind::kAllToAll, std::move(input), std::move(output), ReduceOp::kSum, 0});
}

std::shared_ptr<Work> SingleRankCommunicator::broadcast(Tensor tensor, int root) {
  return complete({CollectiveKind::kBroadcast, std::move(tensor), {}, ReduceOp::kSum, root});
}

std::shared_ptr<Work> SingleRankCommunicator::barrier() {
  return complete({CollectiveKind::kBarrier, {}, {}, ReduceOp::kSum, 0});
}

}  // namespace zt::comm
