// Dropping one op on purpose, for the fault-injection tests.
#include "comm/skipping_communicator.h"

#include <cstdio>
#include <string>
#include <utility>

#include "comm/split_requests_internal.h"
#include "core/memory_tracker.h"

namespace zt::comm {

OpSkipFault::OpSkipFault(CollectiveKind kind, std::int64_t step, const MemoryTracker* phases)
    : kind_(kind), step_(step), phases_(phases) {}

bool OpSkipFault::drops(CollectiveKind kind, const std::string& group) {
  if (kind != kind_ || phases_ == nullptr || phases_->step() != step_) return false;
  if (fired_.exchange(true)) return false;
  std::fprintf(stderr,
               "zerotrain: injected fault (ZEROTRAIN_FAULT) at step %lld: %s of group %s not "
               "issued\n",
               static_cast<long long>(step_), std::string(collective_name(kind)).c_str(),
               group.c_str());
  std::fflush(stderr);
  return true;
}

SkippingCommunicator::SkippingCommunicator(std::unique_ptr<Communicator> inner,
                                           std::shared_ptr<OpSkipFault> fault, std::string group)
    : inner_(std::move(inner)), fault_(std::move(fault)), group_(std::move(group)) {}

std::shared_ptr<Work> SkippingCommunicator::dropped(CollectiveKind kind) {
  auto work = std::make_shared<Work>(0, std::string(collective_name(kind)) + " (not issued)",
                                     inner_->timeout());
  work->mark_completed();
  return work;
}

std::shared_ptr<Work> SkippingCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  if (fault_->drops(CollectiveKind::kAllReduce, group_)) return dropped(CollectiveKind::kAllReduce);
  return inner_->all_reduce(std::move(tensor), op);
}

std::shared_ptr<Work> SkippingCommunicator::reduce_scatter(Tensor input, Tensor output,
                                                           ReduceOp op) {
  if (fault_->drops(CollectiveKind::kReduceScatter, group_)) {
    return dropped(CollectiveKind::kReduceScatter);
  }
  return inner_->reduce_scatter(std::move(input), std::move(output), op);
}

std::shared_ptr<Work> SkippingCommunicator::all_gather(Tensor input, Tensor output) {
  if (fault_->drops(CollectiveKind::kAllGather, group_)) return dropped(CollectiveKind::kAllGather);
  return inner_->all_gather(std::move(input), std::move(output));
}

std::shared_ptr<Work> SkippingCommunicator::all_to_all(Tensor input, Tensor output) {
  if (fault_->drops(CollectiveKind::kAllToAll, group_)) return dropped(CollectiveKind::kAllToAll);
  return inner_->all_to_all(std::move(input), std::move(output));
}

std::shared_ptr<Work> SkippingCommunicator::broadcast(Tensor tensor, int root) {
  if (fault_->drops(CollectiveKind::kBroadcast, group_)) return dropped(CollectiveKind::kBroadcast);
  return inner_->broadcast(std::move(tensor), root);
}

std::shared_ptr<Work> SkippingCommunicator::barrier() {
  if (fault_->drops(CollectiveKind::kBarrier, group_)) return dropped(CollectiveKind::kBarrier);
  return inner_->barrier();
}

std::unique_ptr<Communicator> SkippingCommunicator::split_group(const SplitGroup& group) {
  std::unique_ptr<Communicator> inner_group = inner_->split(group.requests);
  if (inner_group == nullptr) return nullptr;
  return std::make_unique<SkippingCommunicator>(std::move(inner_group), fault_,
                                                split_group_name(group_, group));
}

}  // namespace zt::comm
