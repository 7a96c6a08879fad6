// SkippingCommunicator: a decorator for fault-injection tests that drops one op, as a rank
// whose code took another branch would (Note [Skipping an op on purpose]).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/communicator.h"

namespace zt {
class MemoryTracker;
}

namespace zt::comm {

// Note [Skipping an op on purpose]
// ZEROTRAIN_FAULT="rank=1,step=3,skip=all_gather" (runtime/engine/fault_injection.h) makes
// rank 1 leave out the first all-gather it submits in step 3, over any of its communicators:
// the op is never handed on, and its Work comes back completed with the output left as it
// was. The decorator sits above the collective check and the backend's flight recorder, so
// neither sees the op: the rank's later ops take the sequence numbers the skipped one and its
// successors have on the other ranks, which is what a real skip does to them, and what
// `zerotrain diagnose` has to recognize (Note [Diagnosing from flight records]).

// Which op to drop; one per rank, shared by its communicators and their splits.
class OpSkipFault {
 public:
  // `phases` (it must outlive this) is where the trainer's step is read from.
  OpSkipFault(CollectiveKind kind, std::int64_t step, const MemoryTracker* phases);

  // Whether this op (of `kind`, on the communicator named `group`) is the one to drop: true
  // for the first such op in the step, false ever after. Says so on stderr when true.
  bool drops(CollectiveKind kind, const std::string& group);

 private:
  const CollectiveKind kind_;
  const std::int64_t step_;
  const MemoryTracker* const phases_;
  std::atomic<bool> fired_{false};
};

class SkippingCommunicator final : public Communicator {
 public:
  // `group` names the communicator in the fault's message.
  SkippingCommunicator(std::unique_ptr<Communicator> inner, std::shared_ptr<OpSkipFault> fault,
                       std::string group);

  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) override;
  std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) override;
  std::shared_ptr<Work> all_gather(Tensor input, Tensor output) override;
  std::shared_ptr<Work> all_to_all(Tensor input, Tensor output) override;
  std::shared_ptr<Work> broadcast(Tensor tensor, int root) override;
  std::shared_ptr<Work> barrier() override;
  std::chrono::milliseconds timeout() const override { return inner_->timeout(); }

 protected:
  std::vector<std::int32_t> all_gather_host_words(const std::vector<std::int32_t>& mine) override {
    return all_gather_host_words_of(*inner_, mine);
  }
  std::unique_ptr<Communicator> split_group(const SplitGroup& group) override;
  PeerCounters peer_counters() const override { return peer_counters_of(*inner_); }
  void begin_group() override { begin_group_of(*inner_); }
  void end_group() override { end_group_of(*inner_); }

 private:
  // A completed Work in place of the dropped op of `kind`.
  std::shared_ptr<Work> dropped(CollectiveKind kind);

  std::unique_ptr<Communicator> inner_;
  std::shared_ptr<OpSkipFault> fault_;
  const std::string group_;
};

}  // namespace zt::comm
