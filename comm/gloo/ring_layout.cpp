// RingLayout: chunk and segment arithmetic of the ring collectives.
#include "comm/gloo/ring_layout.h"

#include <algorithm>

#include "comm/gloo/ring.h"

namespace zt::comm {

RingLayout::RingLayout(std::int64_t count, int world_size, std::size_t element_bytes,
                       std::size_t segment_bytes)
    : count_(count), world_size_(world_size), element_bytes_(element_bytes) {
  const std::int64_t largest_chunk = (count + world_size - 1) / world_size;
  // At least one element per segment, and few enough segments to fit the slot's 20 bits.
  const auto requested = static_cast<std::int64_t>(segment_bytes / element_bytes);
  const std::int64_t fitting = (largest_chunk + kMaxRingSegments - 1) / kMaxRingSegments;
  segment_elements_ = std::max<std::int64_t>({requested, fitting, 1});
}

std::int64_t RingLayout::segments(int chunk) const {
  return (chunk_range(chunk).count + segment_elements_ - 1) / segment_elements_;
}

ShardRange RingLayout::segment_range(int chunk, std::int64_t segment) const {
  const ShardRange range = chunk_range(chunk);
  const std::int64_t begin = segment * segment_elements_;
  return {range.offset + begin, std::min(segment_elements_, range.count - begin)};
}

std::vector<RingUnit> RingLayout::receive_order(int rank, int steps, int chunk_shift) const {
  std::vector<int> chunk_of_step(static_cast<std::size_t>(steps));
  std::vector<std::int64_t> segments_of_step(static_cast<std::size_t>(steps));
  std::int64_t total = 0;
  std::int64_t most = 0;
  for (int step = 0; step < steps; ++step) {
    const auto s = static_cast<std::size_t>(step);
    chunk_of_step[s] = chunk(rank - step - chunk_shift);
    segments_of_step[s] = segments(chunk_of_step[s]);
    total += segments_of_step[s];
    most = std::max(most, segments_of_step[s]);
  }
  std::vector<RingUnit> units;
  units.reserve(static_cast<std::size_t>(total));
  for (std::int64_t time = 0; time < most + steps - 1; ++time) {
    for (int step = 0; step < steps; ++step) {
      const std::int64_t segment = time - step;
      const auto s = static_cast<std::size_t>(step);
      if (segment >= 0 && segment < segments_of_step[s]) {
        units.push_back({step, chunk_of_step[s], segment});
      }
    }
  }
  return units;
}

}  // namespace zt::comm
