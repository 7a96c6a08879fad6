// GlooCommunicator: submission (sequence numbers, Work), execution on the comm thread with
// every exception handed to the Work, the broken state, and each op's body.
#include "comm/gloo/gloo_communicator.h"

#include <gloo/context.h>

#include <utility>

#include "comm/gloo/gloo_builtin_ops.h"
#include "comm/gloo/gloo_connect.h"
#include "comm/gloo/pairwise_exchange.h"
#include "comm/gloo/sigpipe_block.h"
#include "comm/gloo/single_rank_communicator.h"
#include "comm/rendezvous_keys.h"
#include "comm/split_requests_internal.h"
#include "core/error.h"

namespace zt::comm {
namespace {

MemoryTracker& tracker_for(const CommOptions& options, std::unique_ptr<MemoryTracker>& owned) {
  if (options.memory_tracker != nullptr) return *options.memory_tracker;
  owned = std::make_unique<MemoryTracker>(Device::cpu());
  return *owned;
}

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

std::byte* element_address(const Tensor& tensor, std::int64_t element) {
  return static_cast<std::byte*>(tensor.data()) +
         static_cast<std::size_t>(element) * dtype_size(tensor.dtype());
}

}  // namespace

GlooCommunicator::GlooCommunicator(Store& store, int rank, int world_size,
                                   const CommOptions& options)
    : rank_(rank),
      world_size_(world_size),
      options_(options),
      store_(store),
      counters_(world_size),
      scratch_(tracker_for(options, owned_tracker_)) {
  if (options.device != nullptr && options.device->device().kind != DeviceKind::kCpu) {
    staging_ = std::make_unique<DeviceStaging>(*options.device);
  }
  // All-reduce uses ring steps 0 .. 2n-3, which must fit the slot's step field.
  if (2 * world_size - 2 > kMaxRingSteps) {
    throw CommError("the Gloo communicator supports at most " + std::to_string(kMaxRingSteps / 2) +
                    " ranks, got " + std::to_string(world_size));
  }
  context_ = connect_gloo_context(store, rendezvous_key_prefix(options.group_name), rank,
                                  world_size, {options.bind_address, options.interface},
                                  options.timeout, options.status_interval);
  const ScopedSigpipeBlock sigpipe_block;  // the comm thread writes to sockets too
  comm_thread_ = std::make_unique<CpuStream>("comm rank " + std::to_string(rank));
}

GlooCommunicator::~GlooCommunicator() = default;

std::unique_ptr<Communicator> GlooCommunicator::split_group(const SplitGroup& group) {
  if (group.rank < 0) return nullptr;  // Gloo's contexts involve their members only
  CommOptions options = options_;
  options.group_name = split_group_name(options_.group_name, group);
  const int size = static_cast<int>(group.members.size());
  if (size == 1) return std::make_unique<SingleRankCommunicator>(options);
  return std::make_unique<GlooCommunicator>(store_, group.rank, size, options);
}

std::shared_ptr<Work> GlooCommunicator::submit(const CollectiveRequest& request, OpBody body) {
  check_request(request, rank_, world_size_, host_and_device_home(options_.device));
  DeviceStream* compute = options_.device != nullptr ? &options_.device->compute_stream() : nullptr;
  // The op reads what the compute stream has produced so far (CPU compute is inline: its
  // event is already complete).
  DeviceEvent inputs_ready = compute != nullptr ? compute->record() : DeviceEvent();
  std::lock_guard lock(submit_mutex_);
  const std::uint64_t sequence_number = next_sequence_number_++;
  auto work = std::make_shared<Work>(sequence_number,
                                     describe_request(request, sequence_number, rank_, world_size_),
                                     options_.timeout, options_.status_interval, compute);
  const std::uint64_t flight_id = record_submitted(options_.flight_recorder.get(),
                                                   options_.group_name, sequence_number, request);
  comm_thread_->enqueue([this, work, flight_id, request = CollectiveRequest(request),
                         inputs_ready = std::move(inputs_ready), body = std::move(body)]() mutable {
    execute(*work, flight_id, request, inputs_ready, body);  // clears `request`
  });
  return work;
}

std::vector<PeerBytes> GlooCommunicator::run_body(std::uint64_t sequence_number,
                                                  const CollectiveRequest& request,
                                                  const OpBody& body) {
  if (staging_ == nullptr || request_device(request).kind == DeviceKind::kCpu) {
    return body(sequence_number, request);
  }
  const CollectiveRequest host = staging_->stage_in(request);
  std::vector<PeerBytes> sent = body(sequence_number, host);
  staging_->stage_out(request, host);
  return sent;
}

void GlooCommunicator::execute(Work& work, std::uint64_t flight_id, CollectiveRequest& request,
                               const DeviceEvent& inputs_ready, const OpBody& body) {
  FlightRecorder* const recorder =
      flight_id == kNotRecorded ? nullptr : options_.flight_recorder.get();
  // Note [Releasing an op's tensors]: the op's hold on its tensors ends before a waiter can
  // go on. Otherwise the caller may allocate its next buffers while this thread still keeps
  // the last ones alive, and the rank's peak memory would depend on thread timing (it did:
  // one block's gradient buffer more in some runs, and never in the estimator's).
  if (!broken_reason_.empty()) {
    request = CollectiveRequest{};
    if (recorder != nullptr) recorder->ended(flight_id, broken_reason_);
    work.mark_completed(std::make_exception_ptr(CommError(broken_reason_)));
    return;
  }
  try {
    inputs_ready.synchronize();
    if (recorder != nullptr) recorder->started(flight_id);
    const std::vector<PeerBytes> sent = run_body(work.sequence_number(), request, body);
    counters_.add(request.kind, sent);
    request = CollectiveRequest{};
    if (recorder != nullptr) recorder->ended(flight_id);
    work.mark_completed();
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    mark_broken(work, error);
    request = CollectiveRequest{};
    if (recorder != nullptr) recorder->ended(flight_id, message_of(error));
    work.mark_completed(error);
  }
}

void GlooCommunicator::mark_broken(const Work& failed, const std::exception_ptr& error) noexcept {
  try {
    broken_reason_ =
        "communicator is broken after " + failed.description() + " failed: " + message_of(error);
    // Peers blocked on this rank now fail at once ("connection reset") instead of at their
    // timeout; the messages of the failed op can no longer arrive half-way either.
    context_->closeConnections();
  } catch (...) {
    if (broken_reason_.empty()) broken_reason_ = "communicator is broken";
  }
}

std::vector<PeerBytes> GlooCommunicator::to_right_neighbour(std::uint64_t bytes) const {
  return {{(rank_ + 1) % world_size_, bytes}};
}

RingOp GlooCommunicator::ring_op(std::uint64_t sequence_number) const {
  return {*context_, rank_, world_size_, sequence_number, options_.timeout, options_.segment_bytes};
}

std::shared_ptr<Work> GlooCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  CollectiveRequest request{CollectiveKind::kAllReduce, std::move(tensor), {}, op, 0};
  return submit(request, [this](std::uint64_t sequence_number, const CollectiveRequest& host) {
    const Tensor& data = host.input;
    // Ring all-reduce = ring reduce-scatter into this rank's shard, in place, then ring
    // all-gather of the shards: 2 (n-1)/n of the buffer sent, partial sums in the wire dtype.
    const RingOp ring = ring_op(sequence_number);
    const std::int64_t count = data.numel();
    std::byte* shard = element_address(data, shard_range(count, world_size_, rank_).offset);
    std::uint64_t bytes =
        ring_reduce_scatter(ring, data.data(), shard, count, data.dtype(), host.op, scratch_, 0);
    bytes += ring_all_gather(ring, shard, data.data(), count, data.dtype(), world_size_ - 1);
    return to_right_neighbour(bytes);
  });
}

std::shared_ptr<Work> GlooCommunicator::reduce_scatter(Tensor input, Tensor output, ReduceOp op) {
  CollectiveRequest request{CollectiveKind::kReduceScatter, std::move(input), std::move(output), op,
                            0};
  return submit(request, [this](std::uint64_t sequence_number, const CollectiveRequest& host) {
    return to_right_neighbour(ring_reduce_scatter(ring_op(sequence_number), host.input.data(),
                                                  host.output.data(), host.input.numel(),
                                                  host.input.dtype(), host.op, scratch_, 0));
  });
}

std::shared_ptr<Work> GlooCommunicator::all_gather(Tensor input, Tensor output) {
  CollectiveRequest request{CollectiveKind::kAllGather, std::move(input), std::move(output),
                            ReduceOp::kSum, 0};
  return submit(request, [this](std::uint64_t sequence_number, const CollectiveRequest& host) {
    return to_right_neighbour(ring_all_gather(ring_op(sequence_number), host.input.data(),
                                              host.output.data(), host.output.numel(),
                                              host.output.dtype(), 0));
  });
}

std::shared_ptr<Work> GlooCommunicator::all_to_all(Tensor input, Tensor output) {
  CollectiveRequest request{CollectiveKind::kAllToAll, std::move(input), std::move(output),
                            ReduceOp::kSum, 0};
  return submit(request, [this](std::uint64_t sequence_number, const CollectiveRequest& host) {
    return pairwise_all_to_all(ring_op(sequence_number), host.input.data(), host.output.data(),
                               host.input.nbytes() / static_cast<std::size_t>(world_size_));
  });
}

std::shared_ptr<Work> GlooCommunicator::broadcast(Tensor tensor, int root) {
  CollectiveRequest request{
      CollectiveKind::kBroadcast, std::move(tensor), {}, ReduceOp::kSum, root};
  return submit(request, [this](std::uint64_t sequence_number, const CollectiveRequest& host) {
    return gloo_broadcast(context_, host.input.data(), host.input.nbytes(), host.root,
                          static_cast<std::uint32_t>(sequence_number), options_.timeout);
  });
}

std::shared_ptr<Work> GlooCommunicator::barrier() {
  return submit(
      {},
      [this](std::uint64_t sequence_number, const CollectiveRequest&) -> std::vector<PeerBytes> {
        gloo_barrier(context_, static_cast<std::uint32_t>(sequence_number), options_.timeout);
        return {};
      });
}

}  // namespace zt::comm
