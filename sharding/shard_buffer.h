// ShardBuffer: this rank's shard of a flat buffer (its slice of every segment, see
// ShardPlan) wherever it lives: in a buffer of its own (slices back to back, shard_numel
// elements), or in place inside a full flat buffer (padded_numel), where an in-place
// reduce-scatter leaves it and an in-place all-gather reads it. The in-place form is what
// keeps a gradient shard or an fp32 master shard from costing a second copy.
#pragma once

#include <functional>

#include "core/tensor.h"
#include "sharding/shard_plan.h"

namespace zt::zero {

class ShardBuffer {
 public:
  ShardBuffer() = default;
  // `shard` holds shard_numel elements, the slices back to back.
  static ShardBuffer own(const ShardPlan& plan, Tensor shard);
  // `full` holds padded_numel elements; the shard is this rank's slices inside it.
  static ShardBuffer in_place(const ShardPlan& plan, Tensor full);

  bool defined() const { return storage_.defined(); }
  bool is_in_place() const { return in_place_; }
  const Tensor& storage() const { return storage_; }
  DType dtype() const { return storage_.dtype(); }

  // This rank's slice of `segment` (slice_numel elements).
  Tensor slice(const Segment& segment) const;
  // Calls fn(segment, slice) for every segment of every block, in shard order.
  void for_each_slice(const std::function<void(const Segment&, const Tensor&)>& fn) const;

 private:
  ShardBuffer(const ShardPlan* plan, Tensor storage, bool in_place)
      : plan_(plan), storage_(std::move(storage)), in_place_(in_place) {}

  const ShardPlan* plan_ = nullptr;
  Tensor storage_;
  bool in_place_ = false;
};

}  // namespace zt::zero
