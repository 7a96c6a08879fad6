// RingLayout: where each chunk and segment of a ring collective lies, so ring_reduce_scatter
// and ring_all_gather (and the peers on both ends of a transfer) agree on every message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace zt::comm {

// One segment a rank receives: at `step`, segment `segment` of chunk `chunk`.
struct RingUnit {
  int step = 0;
  int chunk = 0;
  std::int64_t segment = 0;
};

class RingLayout {
 public:
  RingLayout(std::int64_t count, int world_size, std::size_t element_bytes,
             std::size_t segment_bytes);

  // Chunk index of a rank-relative position, wrapping around the ring.
  int chunk(int rank_minus_k) const {
    return ((rank_minus_k % world_size_) + world_size_) % world_size_;
  }
  ShardRange chunk_range(int chunk) const { return shard_range(count_, world_size_, chunk); }
  std::int64_t segments(int chunk) const;
  // Elements [offset, offset + count) of the whole buffer that segment k of `chunk` covers.
  ShardRange segment_range(int chunk, std::int64_t segment) const;

  // Note [Diagonal order]
  // The units `rank` receives over `steps` steps, where step s brings chunk
  // (rank - s - chunk_shift) mod n, ordered by (step + segment), then step: segment k
  // travels one hop per time unit, so what a rank forwards at time t its right neighbour
  // consumes at t + 1. In-flight data then stays at a few segments per step, whatever the
  // buffer size (a step-by-step order would hold a whole chunk per rank in flight).
  std::vector<RingUnit> receive_order(int rank, int steps, int chunk_shift) const;

  std::int64_t count() const { return count_; }
  std::int64_t segment_elements() const { return segment_elements_; }
  std::size_t element_bytes() const { return element_bytes_; }
  std::size_t bytes(std::int64_t elements) const {
    return static_cast<std::size_t>(elements) * element_bytes_;
  }

 private:
  std::int64_t count_;
  int world_size_;
  std::size_t element_bytes_;
  std::int64_t segment_elements_;
};

}  // namespace zt::comm
