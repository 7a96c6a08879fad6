// The ring algorithms on Gloo's unbound buffers (Note [Ring collectives]): reduce-scatter
// and all-gather, each rank sending to its right neighbour and receiving from its left.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "comm/communicator.h"
#include "comm/gloo/scratch_buffer.h"
#include "core/dtype.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace zt::comm {

// Note [Ring collectives]
// The buffer of `count` elements splits into world_size chunks by shard_range; chunk j is
// rank j's shard. Reduce-scatter: at step s (0 .. n-2) rank r sends chunk (r-s-1) mod n to
// rank r+1 and receives chunk (r-s-2) mod n from rank r-1, combining it with its own copy;
// after n-1 steps chunk r holds the reduction over all ranks. All-gather: at step s rank r
// sends chunk (r-s) mod n and receives chunk (r-s-1) mod n, which it forwards next step.
// Either way a rank sends every chunk but one: (n-1)/n of the buffer, exactly
// count - shard(r) (reduce-scatter) or count - shard(r+1) (all-gather) elements.
// Chunks move in segments (CommOptions::segment_bytes), so a segment is combined and
// forwarded while the next one is still on the wire.

// One ring collective's identity and limits.
struct RingOp {
  ::gloo::Context& context;
  int rank = 0;
  int world_size = 0;
  std::uint64_t sequence_number = 0;  // tags every message of the op (Note [Ring slots])
  std::chrono::milliseconds timeout{};
  std::size_t segment_bytes = 0;
};

// Note [Ring slots]
// Every message carries a Gloo slot that is unique within the context: our own prefix byte
// (Gloo's collectives use 0x01..0x08 in the top byte), then 24 bits of the op's sequence
// number, 12 bits of step and 20 bits of segment. Ops run one at a time, so a sequence
// number that wraps after 2^24 ops cannot meet itself; distinct slots keep a fast rank's
// next op from landing in a slow peer's current one.
inline constexpr std::uint64_t kRingSlotPrefix = 0x5A;
inline constexpr int kMaxRingSteps = 1 << 12;
inline constexpr std::int64_t kMaxRingSegments = std::int64_t{1} << 20;
inline std::uint64_t ring_slot(std::uint64_t sequence_number, int step, std::int64_t segment) {
  return (kRingSlotPrefix << 56) | ((sequence_number & 0xFFFFFFu) << 32) |
         ((static_cast<std::uint64_t>(step) & 0xFFFu) << 20) |
         (static_cast<std::uint64_t>(segment) & 0xFFFFFu);
}

// The scratch bytes ring_reduce_scatter reserves for `count` elements of `dtype` on `rank`
// (the meta communicator reserves the same: Note [Meta devices]).
std::size_t ring_reduce_scatter_scratch_bytes(std::int64_t count, int world_size, int rank,
                                              DType dtype, std::size_t segment_bytes);

// Reduces `count` elements of `input` over all ranks into `output`, this rank's shard
// (shard_range). `output` may be `input`'s own shard (in place) or disjoint from it. Slots
// use steps first_step .. first_step+n-2. Returns the payload bytes this rank sent.
std::uint64_t ring_reduce_scatter(const RingOp& op, const void* input, void* output,
                                  std::int64_t count, DType dtype, ReduceOp reduce,
                                  ScratchBuffer& scratch, int first_step = 0);

// Gathers every rank's shard `input` into `output` (`count` elements, rank order). `input`
// may be `output`'s own shard (in place). Returns the payload bytes this rank sent.
std::uint64_t ring_all_gather(const RingOp& op, const void* input, void* output, std::int64_t count,
                              DType dtype, int first_step = 0);

}  // namespace zt::comm
