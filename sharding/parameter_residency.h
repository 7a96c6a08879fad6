// ParameterResidency: where a sharded strategy's compute-dtype parameters live between
// steps, and what each block's forward and backward must do to have them: full parameters
// refreshed after each update (stages 1-2, FullParameters) or a shard gathered per block
// (stage 3, GatheredParameters). Note [The strategy's parts] in docs/ARCHITECTURE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "sharding/shard_buffer.h"

namespace zt::zero {

class ParameterResidency {
 public:
  virtual ~ParameterResidency() = default;

  // The block's parameter views for its forward or backward.
  virtual const std::vector<Tensor>& parameters(std::size_t block) = 0;
  virtual void before_forward(std::size_t block) = 0;
  virtual void after_forward(std::size_t block) = 0;
  // A forward without backward ended (evaluation): the next forward starts at block 0.
  virtual void end_forward_only() = 0;
  virtual void before_backward(std::size_t block) = 0;
  virtual void after_backward(std::size_t block, bool last_micro_batch) = 0;

  // This rank's compute-dtype parameters: its slices of the full parameters or its shard.
  virtual const ShardBuffer& own_shard() const = 0;
  Tensor own_parameters(const Segment& segment) const { return own_shard().slice(segment); }

  // Waits for every collective in flight that reads the rank's own slices.
  virtual void wait_for_readers() = 0;
  // The rank's own slices are about to change: no reader in flight, no stale copy kept.
  virtual void before_update() = 0;
  // The rank's own slices changed: they go to every rank that keeps a full copy.
  virtual void publish() = 0;
  // The next forward's first blocks, on the way.
  virtual void start_next_forward() = 0;
  // The most bytes of gathered parameters live at once (0 without gathers).
  virtual std::int64_t peak_gathered_bytes() const = 0;
};

}  // namespace zt::zero
