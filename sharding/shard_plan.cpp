// Cutting blocks into equal-sliced segments.
#include "sharding/shard_plan.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace zt::zero {

BlockSegments::BlockSegments(std::int64_t offset, std::int64_t padded_numel,
                             std::int64_t shard_offset, std::int64_t segment_elements,
                             int world_size)
    : offset_(offset),
      padded_numel_(padded_numel),
      shard_offset_(shard_offset),
      segment_elements_(segment_elements),
      world_size_(world_size),
      count_((padded_numel + segment_elements - 1) / segment_elements) {}

Segment BlockSegments::operator[](std::int64_t index) const {
  ZT_CHECK(index >= 0 && index < count_, "segment " + std::to_string(index) + " out of range");
  const std::int64_t begin = index * segment_elements_;
  return {offset_ + begin, std::min(segment_elements_, padded_numel_ - begin),
          shard_offset_ + begin / world_size_};
}

ShardPlan::ShardPlan(const FlatLayout& layout, int world_size, int rank,
                     std::int64_t max_segment_elements)
    : world_size_(world_size), rank_(rank) {
  const std::int64_t unit = kShardAlignElements * world_size;
  const std::int64_t segment_elements = std::max(unit, max_segment_elements / unit * unit);
  segments_.reserve(layout.blocks.size());
  for (const BlockSlots& block : layout.blocks) {
    ZT_CHECK(block.padded_numel % unit == 0, "block " + block.name + " is not padded per block");
    segments_.emplace_back(block.offset, block.padded_numel, shard_numel_, segment_elements,
                           world_size);
    segment_count_ += segments_.back().size();
    shard_numel_ += block.padded_numel / world_size;
  }
}

}  // namespace zt::zero
