// Recording, holding and forwarding of ops on the decorator's own ordered thread.
#include "comm/recording_communicator.h"

#include <thread>
#include <utility>

namespace zt::comm {

RecordingCommunicator::RecordingCommunicator(Communicator& inner,
                                             std::function<std::string()> phase)
    : inner_(inner), phase_(std::move(phase)), stream_("recording comm") {
  place_as_inner();
}

RecordingCommunicator::RecordingCommunicator(std::unique_ptr<Communicator> inner,
                                             std::function<std::string()> phase)
    : owned_inner_(std::move(inner)),
      inner_(*owned_inner_),
      phase_(std::move(phase)),
      stream_("recording comm") {
  place_as_inner();
}

void RecordingCommunicator::place_as_inner() {
  std::vector<int> nodes = inner_.rank_nodes();
  if (!nodes.empty()) place_ranks(std::move(nodes));
}

std::vector<std::int32_t> RecordingCommunicator::all_gather_host_words(
    const std::vector<std::int32_t>& mine) {
  return all_gather_host_words_of(inner_, mine);
}

std::unique_ptr<Communicator> RecordingCommunicator::split_group(const SplitGroup& group) {
  std::unique_ptr<Communicator> inner_group = inner_.split(group.requests);
  if (inner_group == nullptr) return nullptr;
  return std::make_unique<RecordingCommunicator>(std::move(inner_group), phase_);
}

RecordingCommunicator::~RecordingCommunicator() { release_holds(); }

void RecordingCommunicator::hold_until(HoldCondition may_start, std::chrono::milliseconds bound) {
  std::lock_guard lock(mutex_);
  may_start_ = std::move(may_start);
  bound_ = bound;
}

void RecordingCommunicator::release_holds() {
  std::lock_guard lock(mutex_);
  may_start_ = nullptr;
}

std::vector<RecordedOp> RecordingCommunicator::ops() const {
  std::lock_guard lock(mutex_);
  return ops_;
}

std::shared_ptr<Work> RecordingCommunicator::submit(CollectiveKind kind, std::int64_t bytes,
                                                    Launch launch) {
  std::shared_ptr<Work> outer;
  std::size_t index = 0;
  {
    std::lock_guard lock(mutex_);
    index = ops_.size();
    RecordedOp op;
    op.index = index;
    op.kind = kind;
    op.bytes = bytes;
    op.submitted_in = phase_();
    ops_.push_back(std::move(op));
    outer = std::make_shared<Work>(
        index, std::string(collective_name(kind)) + " #" + std::to_string(index) + " (recorded)",
        inner_.timeout());
  }
  stream_.enqueue([this, index, launch = std::move(launch), outer] { run(index, launch, *outer); });
  return outer;
}

// Polls the phase: the compute thread changes it without telling anyone, and the bound keeps
// a condition that never holds from hanging the rank.
void RecordingCommunicator::wait_for_hold(std::size_t index) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::unique_lock lock(mutex_);
    if (!may_start_ || may_start_(ops_[index], phase_())) return;
    if (std::chrono::steady_clock::now() - start > bound_) {
      ops_[index].held_past_bound = true;
      may_start_ = nullptr;
      return;
    }
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void RecordingCommunicator::run(std::size_t index, const Launch& launch, Work& outer) {
  try {
    wait_for_hold(index);
    {
      std::lock_guard lock(mutex_);
      ops_[index].started_in = phase_();
    }
    launch()->wait();
    {
      std::lock_guard lock(mutex_);
      ops_[index].completed_in = phase_();
    }
    outer.mark_completed();
  } catch (...) {
    outer.mark_completed(std::current_exception());
  }
}

std::shared_ptr<Work> RecordingCommunicator::all_reduce(Tensor tensor, ReduceOp op) {
  const auto bytes = static_cast<std::int64_t>(tensor.nbytes());
  return submit(CollectiveKind::kAllReduce, bytes,
                [this, tensor, op] { return inner_.all_reduce(tensor, op); });
}

std::shared_ptr<Work> RecordingCommunicator::reduce_scatter(Tensor input, Tensor output,
                                                            ReduceOp op) {
  const auto bytes = static_cast<std::int64_t>(input.nbytes());
  return submit(CollectiveKind::kReduceScatter, bytes,
                [this, input, output, op] { return inner_.reduce_scatter(input, output, op); });
}

std::shared_ptr<Work> RecordingCommunicator::all_gather(Tensor input, Tensor output) {
  const auto bytes = static_cast<std::int64_t>(output.nbytes());
  return submit(CollectiveKind::kAllGather, bytes,
                [this, input, output] { return inner_.all_gather(input, output); });
}

std::shared_ptr<Work> RecordingCommunicator::all_to_all(Tensor input, Tensor output) {
  const auto bytes = static_cast<std::int64_t>(input.nbytes());
  return submit(CollectiveKind::kAllToAll, bytes,
                [this, input, output] { return inner_.all_to_all(input, output); });
}

std::shared_ptr<Work> RecordingCommunicator::broadcast(Tensor tensor, int root) {
  const auto bytes = static_cast<std::int64_t>(tensor.nbytes());
  return submit(CollectiveKind::kBroadcast, bytes,
                [this, tensor, root] { return inner_.broadcast(tensor, root); });
}

std::shared_ptr<Work> RecordingCommunicator::barrier() {
  return submit(CollectiveKind::kBarrier, 0, [this] { return inner_.barrier(); });
}

}  // namespace zt::comm
