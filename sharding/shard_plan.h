// ShardPlan: how each block's padded flat region splits into segments (the units of one
// reduce-scatter or all-gather, at most zero.reduce_bucket_size) and which slice of every
// segment this rank owns. Note [Shards by segment]: every segment is a multiple of
// world_size × kShardAlignElements, so all ranks own equal, aligned slices; this rank's shard
// buffer is its slices of all segments back to back, in block order. A block's segments are
// all the same length but its last, so they are computed from their index, not stored: the
// plan of any model costs a few integers per block.
#pragma once

#include <cstdint>
#include <iterator>
#include <vector>

#include "sharding/flat_layout.h"

namespace zt::zero {

struct Segment {
  std::int64_t offset = 0;        // first element in the flat layout
  std::int64_t numel = 0;         // elements, a multiple of world_size × kShardAlignElements
  std::int64_t shard_offset = 0;  // where this rank's slice starts in its shard buffer
};

// The segments of one block, in order, computed on access.
class BlockSegments {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Segment;
    using difference_type = std::ptrdiff_t;
    Iterator(const BlockSegments* segments, std::int64_t index)
        : segments_(segments), index_(index) {}
    Segment operator*() const { return (*segments_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const BlockSegments* segments_;
    std::int64_t index_;
  };

  BlockSegments(std::int64_t offset, std::int64_t padded_numel, std::int64_t shard_offset,
                std::int64_t segment_elements, int world_size);

  std::int64_t size() const { return count_; }
  Segment operator[](std::int64_t index) const;
  Segment front() const { return (*this)[0]; }
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, count_}; }

 private:
  std::int64_t offset_;        // the block's first element in the flat layout
  std::int64_t padded_numel_;  // the block's padded elements
  std::int64_t shard_offset_;  // the block's first slice in this rank's shard
  std::int64_t segment_elements_;
  int world_size_;
  std::int64_t count_;
};

class ShardPlan {
 public:
  // `layout` must pad each block (BlockPadding::kEachBlock) for `world_size`.
  ShardPlan(const FlatLayout& layout, int world_size, int rank, std::int64_t max_segment_elements);

  const BlockSegments& segments(std::size_t block) const { return segments_.at(block); }
  std::size_t block_count() const { return segments_.size(); }
  // Segments of every block together: the collectives one pass over the model launches.
  std::int64_t segment_count() const { return segment_count_; }
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
  std::vector<BlockSegments> segments_;  // per block
  std::int64_t segment_count_ = 0;
  std::int64_t shard_numel_ = 0;
};

}  // namespace zt::zero
