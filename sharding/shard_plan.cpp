// Cutting blocks into equal-sliced segments.
#include "sharding/shard_plan.h"

#include <algorithm>

#include "core/error.h"

namespace zt::zero {

ShardPlan::ShardPlan(const FlatLayout& layout, int world_size, int rank,
                     std::int64_t max_segment_elements)
    : world_size_(world_size), rank_(rank) {
  const std::int64_t unit = kShardAlignElements * world_size;
  const std::int64_t segment_elements = std::max(unit, max_segment_elements / unit * unit);
  for (const BlockSlots& block : layout.blocks) {
    ZT_CHECK(block.padded_numel % unit == 0, "block " + block.name + " is not padded per block");
    std::vector<Segment> segments;
    for (std::int64_t begin = 0; begin < block.padded_numel; begin += segment_elements) {
      const std::int64_t numel = std::min(segment_elements, block.padded_numel - begin);
      segments.push_back({block.offset + begin, numel, shard_numel_});
      shard_numel_ += numel / world_size;
    }
    segments_.push_back(std::move(segments));
  }
}

}  // namespace zt::zero
