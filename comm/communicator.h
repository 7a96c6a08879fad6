// Communicator: asynchronous collectives among the ranks of one group. Each op
// returns a Work; ops run in submission order on the backend's communication queue (a
// thread for Gloo, a CUDA stream for NCCL), so they overlap with compute. Each op is
// ordered after the work its rank's compute stream had when it was submitted (Note
// [Waiting on a collective] in comm/work.h). Backends: Gloo (CPU, and CUDA tensors staged
// through pinned host memory) and NCCL (CUDA).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "comm/work.h"
#include "core/tensor.h"

namespace zt::comm {

enum class ReduceOp : std::uint8_t { kSum, kAvg, kMax };

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kBarrier,
};
inline constexpr std::size_t kCollectiveKindCount = 5;
std::string_view collective_name(CollectiveKind kind);

// Bytes this rank sent (payload only, not headers) and ops completed, per op kind.
struct CommCounters {
  std::array<std::uint64_t, kCollectiveKindCount> bytes_sent{};
  std::array<std::uint64_t, kCollectiveKindCount> ops{};
  std::uint64_t bytes(CollectiveKind kind) const {
    return bytes_sent[static_cast<std::size_t>(kind)];
  }
};

// How `count` elements split into world_size parts: the first count % world_size parts get
// one element more. reduce_scatter and all_gather use this split.
struct ShardRange {
  std::int64_t offset = 0;
  std::int64_t count = 0;
};
ShardRange shard_range(std::int64_t count, int world_size, int rank);

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // In place: every rank ends with op over all ranks' `tensor`. f32, bf16 and f16 (bf16 and
  // f16 are accumulated in f32; every rank ends with bitwise the same result).
  virtual std::shared_ptr<Work> all_reduce(Tensor tensor, ReduceOp op) = 0;
  // `input` (count) on every rank; `output` receives this rank's part (shard_range) of the
  // reduction. Each rank sends (n-1)/n of `input`. `output` may be `input`'s own part.
  virtual std::shared_ptr<Work> reduce_scatter(Tensor input, Tensor output, ReduceOp op) = 0;
  // `input` is this rank's part (shard_range of output's count); `output` (count) receives
  // every rank's part in rank order. Each rank sends (n-1)/n of `output`. `input` may be
  // `output`'s own part (in place). Any dtype (moved as bytes), as for broadcast.
  virtual std::shared_ptr<Work> all_gather(Tensor input, Tensor output) = 0;
  // In place: every rank ends with `root`'s `tensor`.
  virtual std::shared_ptr<Work> broadcast(Tensor tensor, int root) = 0;
  virtual std::shared_ptr<Work> barrier() = 0;

  virtual CommCounters counters() const = 0;
  // Bound on every op's wait() unless the caller passes its own.
  virtual std::chrono::milliseconds timeout() const = 0;

  // Runs `submit_ops`, which submits ops on this communicator, and has them run as one
  // group: NCCL launches them together (ncclGroupStart/End: one launch for a bucket's
  // reduce-scatters, and sends of one op need not wait for another's), Gloo runs them one
  // after another as always. Each op keeps its own Work; wait on them after this returns
  // (a device op of a group is enqueued only when the group closes). Groups nest; ops
  // submitted from other threads while a group is open join it.
  void group(const std::function<void()>& submit_ops);

 protected:
  // Open and close a group (group() pairs them, also when submit_ops throws). A backend
  // that runs ops one at a time keeps these no-ops.
  virtual void begin_group() {}
  virtual void end_group() {}
};

}  // namespace zt::comm
