// Where a rank's shard slices lie: its own buffer or in place in a full one.
#include "sharding/shard_buffer.h"

#include "core/error.h"

namespace zt::zero {

ShardBuffer ShardBuffer::own(const ShardPlan& plan, Tensor shard) {
  ZT_CHECK(shard.numel() == plan.shard_numel(), "shard buffer of the wrong length");
  return ShardBuffer(&plan, std::move(shard), false);
}

ShardBuffer ShardBuffer::in_place(const ShardPlan& plan, Tensor full) {
  return ShardBuffer(&plan, std::move(full), true);
}

Tensor ShardBuffer::slice(const Segment& segment) const {
  const Shape shape{plan_->slice_numel(segment)};
  if (in_place_) return storage_.view(plan_->slice_offset(segment, plan_->rank()), shape);
  return storage_.view(segment.shard_offset, shape);
}

void ShardBuffer::for_each_slice(
    const std::function<void(const Segment&, const Tensor&)>& fn) const {
  for (std::size_t block = 0; block < plan_->block_count(); ++block) {
    for (const Segment& segment : plan_->segments(block)) fn(segment, slice(segment));
  }
}

}  // namespace zt::zero
