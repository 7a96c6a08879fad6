// CollectiveCheck: the ranks compare what collectives they issued, so that a rank that took
// another branch, sized a bucket differently or skipped an op is named at once instead of
// hanging the job or reducing buffers of different sizes (Note [The collective check]).
// CheckedCommunicator (comm/checked_communicator.h) is the decorator that fingerprints the ops.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/dtype.h"

namespace zt {
class MemoryTracker;
}

namespace zt::comm {

// Note [The collective check]
// Every op a checked communicator is given becomes a fingerprint: its number among that
// communicator's ops, kind, element count, dtype, root, reduction, and the trainer's step. The
// members of the communicator compare them through all_gather_host_words, which goes to the backend
// directly (unchecked, and recorded by the flight recorder as the small all_gather it is):
// - kEvery, before each op is handed on, as PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL does: a
//   mismatch throws before any of the op's data moves. The op then waits for the ops queued
//   before it (the exchange runs behind them), and an NCCL group's ops run one at a time.
// - kStep, at the end of each optimizer step (CollectiveCheck::end_step, collective): each
//   checked communicator's members compare the count and a hash of the ops since the last
//   check, then, when they differ, the lists themselves, to name the first op that differs.
//   One exchange of four words per communicator and step when all is well.
// end_step goes over the rank's checked communicators in the order they were made, which is
// the same order on every member (the lanes, then splits, each collective over its parent), so
// the exchanges cannot wait on each other in a cycle. All ops are submitted by the trainer's
// thread at the same points of the program on every rank, so the windows line up. The check
// compares what the comm layer sees: two ops of the same kind, size and dtype swapped
// between ranks look alike (the flight record's phases tell those apart).
enum class CollectiveCheckMode : std::uint8_t { kOff, kStep, kEvery };
std::string_view collective_check_mode_name(CollectiveCheckMode mode);

struct OpFingerprint {
  static constexpr std::size_t kWords = 9;

  std::uint64_t index = 0;  // among its checked communicator's ops, from 0
  CollectiveKind kind = CollectiveKind::kBarrier;
  std::int64_t numel = 0;  // of the op's larger tensor
  DType dtype = DType::kF32;
  int root = -1;
  int reduce = -1;        // a reduction's ReduceOp; -1 for the others
  std::int64_t step = 0;  // the trainer's, when submitted

  std::array<std::int32_t, kWords> words() const;
  static OpFingerprint from_words(const std::int32_t* words);
  friend bool operator==(const OpFingerprint&, const OpFingerprint&) = default;
  // "reduce_scatter #12 (65536 f32, sum, step 1)"
  std::string describe() const;
};

class CheckedCommunicator;

// One per rank, shared by its checked communicators (CommOptions::collective_check).
class CollectiveCheck {
 public:
  // `phases` (null: none) is where the step is read from; it must outlive the check.
  explicit CollectiveCheck(CollectiveCheckMode mode, const MemoryTracker* phases = nullptr);
  CollectiveCheck(const CollectiveCheck&) = delete;
  CollectiveCheck& operator=(const CollectiveCheck&) = delete;

  CollectiveCheckMode mode() const { return mode_; }
  std::int64_t step() const;
  // kStep: every checked communicator of this rank compares its members' ops since the last
  // call; throws CommError naming the group, the ranks and each side's first op that differs.
  // Collective: every rank calls it at the same point of its step. Other modes: nothing.
  void end_step();

 private:
  friend class CheckedCommunicator;
  void add(CheckedCommunicator* member);
  void remove(CheckedCommunicator* member);

  const CollectiveCheckMode mode_;
  const MemoryTracker* const phases_;
  std::mutex mutex_;                           // guards members_
  std::vector<CheckedCommunicator*> members_;  // in the order they were made
};

// The error for ranks whose fingerprints differ: `by_rank[r]` is rank r's (null: it issued
// none there). Names the group, the ranks of each kind of op and what each issued.
std::string collective_mismatch_message(const std::string& group, CollectiveCheckMode mode,
                                        const std::vector<const OpFingerprint*>& by_rank);

}  // namespace zt::comm
