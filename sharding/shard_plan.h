// ShardPlan: how each block's padded flat region splits into segments (the units of one
// reduce-scatter or all-gather, at most zero.reduce_bucket_size) and which slice of every
// segment this rank owns. Note [Shards by segment]: every segment is a multiple of
// world_size × kShardAlignElements, so all ranks own equal, aligned slices; this rank's shard
// buffer is its slices of all segments back to back, in block order.
#pragma once

#include <cstdint>
#include <vector>

#include "sharding/flat_layout.h"

namespace zt::zero {

struct Segment {
  std::int64_t offset = 0;        // first element in the flat layout
  std::int64_t numel = 0;         // elements, a multiple of world_size × kShardAlignElements
  std::int64_t shard_offset = 0;  // where this rank's slice starts in its shard buffer
};

class ShardPlan {
 public:
  // `layout` must pad each block (BlockPadding::kEachBlock) for `world_size`.
  ShardPlan(const FlatLayout& layout, int world_size, int rank, std::int64_t max_segment_elements);

  const std::vector<Segment>& segments(std::size_t block) const { return segments_.at(block); }
  std::size_t block_count() const { return segments_.size(); }
  std::int64_t shard_numel() const { return shard_numel_; }
  std::int64_t slice_numel(const Segment& segment) const { return segment.numel / world_size_; }
  // First flat element of `rank`'s slice of `segment`.
  std::int64_t slice_offset(const Segment& segment, int rank) const {
    return segment.offset + rank * slice_numel(segment);
  }
  int world_size() const { return world_size_; }
  int rank() const { return rank_; }

 private:
  int world_size_;
  int rank_;
  std::vector<std::vector<Segment>> segments_;  // per block
  std::int64_t shard_numel_ = 0;
};

}  // namespace zt::zero
