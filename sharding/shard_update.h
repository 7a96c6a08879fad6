// ShardUpdate: how a rank's shard is updated, one part of a ShardedStrategy (Note [The
// update as a part]): where the fp32 masters and the optimizer states live, and when the
// optimizer runs over them. DeviceUpdate keeps them on the rank's device; OffloadedUpdate in
// host memory (offload.optimizer), updated at the step, per block as gradients become final,
// or during the next step (offload.overlap_step).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/device/host_scalar.h"
#include "sharding/parameter_residency.h"
#include "sharding/shard_buffer.h"

namespace zt::zero {

// Note [The update as a part]
// ShardedStrategy composes what varies between its configurations instead of branching on
// them: where the compute-dtype parameters live (ParameterResidency: full in stages 1-2,
// gathered in stage 3, from a device or a host shard) and how the shard's update runs
// (ShardUpdate). The strategy owns the gradients and the collectives: it hands the update the
// reduced gradient shard and the residency whose own slices the update rewrites, and the
// update says whether those slices changed (they must then be published to the other ranks).
// The update owns the masters (which in fp32 can be the parameters' own storage), the
// optimizer states and anything that outlives a step because the update does (a delayed
// update's buffers, the host tracker). Adding a way to update (NVMe-resident parameters,
// another overlap) is one more ShardUpdate, not one more branch in every method of the
// strategy.
class ShardUpdate {
 public:
  virtual ~ShardUpdate() = default;

  // The f32 masters, in shard order, and the context that reads and writes them (the rank's
  // device, or the host's for offloaded masters).
  virtual const ShardBuffer& masters() const = 0;
  virtual DeviceContext& masters_device() = 0;
  // Whether the masters live somewhere other than the rank's device (collectives over them
  // need a device copy first).
  virtual bool masters_on_host() const = 0;

  // The masters are new (initialized or loaded): their compute-dtype image into the rank's
  // own parameter slices. The caller publishes those.
  virtual void masters_into_own_parameters(ParameterResidency& parameters) = 0;

  // A block's reduced gradient slices are final in the shard (GradientReducer's callback).
  virtual void block_reduced(std::size_t /*block*/, ParameterResidency& /*parameters*/) {}
  // Before the last micro-batch's backward of update_step (ZeroStrategy::prepare_update).
  virtual void prepare(ParameterResidency& /*parameters*/, std::int64_t /*update_step*/,
                       float /*lr*/) {}
  // Whether step() can return each slice's Σg² from its own pass (Note [The gradient norm in
  // the update's pass]); otherwise the strategy reads the norm before the update.
  virtual bool sums_squares_in_step() const = 0;
  // Updates the shard from the reduced gradients (`slice_squares`, when not null and
  // sums_squares_in_step(), receives each slice's Σg² in slice order). Returns whether the
  // rank's own parameter slices changed.
  virtual bool step(ParameterResidency& parameters, std::int64_t step, float lr,
                    std::vector<HostScalar>* slice_squares) = 0;
  // Multiplies the gradients the step will read by `factor` (clipping, loss scaling).
  virtual void scale_gradients(float factor) = 0;
  // The step's gradients are about to be zeroed (or a skipped step's dropped): nothing may
  // still read them.
  virtual void discard_gradients() {}
  // A delayed update (overlap_step) lands now and its parameters go to the own slices.
  // Returns whether there was one (the caller publishes them).
  virtual bool finish_delayed(ParameterResidency& /*parameters*/) { return false; }

  // What a checkpoint saves beyond the masters and the optimizer's states.
  virtual std::vector<std::string> extra_state_names() const { return {}; }
  // The masters into out[0], each optimizer state into out[1 + i], then the extra states
  // (each (shard_numel) f32 in host memory).
  virtual void export_states(ParameterResidency& parameters, std::span<float* const> out) = 0;
  // The reverse of export_states; `in` may hold the extra states or not. Leaves the masters'
  // image in the own slices (or, from a save taken with an update in flight, the parameters
  // then in use, as saved); the caller publishes them. Every gather from the old masters is
  // done (ParameterResidency::before_update).
  virtual void import_states(ParameterResidency& parameters, std::span<const float* const> in) = 0;

  // The host tracker of offloaded states; null when they are on the device.
  virtual const MemoryTracker* host_tracker() const { return nullptr; }
};

}  // namespace zt::zero
