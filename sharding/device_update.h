// DeviceUpdate: the shard's update on the rank's own device (Note [The update as a part]):
// f32 masters (the parameters' own storage in fp32, else a buffer of their own) and the
// optimizer's states, one optimizer pass per slice.
#pragma once

#include <vector>

#include "optim/optimizer.h"
#include "sharding/shard_plan.h"
#include "sharding/shard_update.h"

namespace zt::zero {

class DeviceUpdate final : public ShardUpdate {
 public:
  // `masters`: the f32 masters, allocated by the caller (in place in the fp32 parameters, or
  // separate: then `separate_masters`, and step() rounds them into the own parameters in the
  // same pass). Allocates the optimizer's states on `device`'s tracker. `gradients` is the
  // reduced gradient shard the step reads. Everything outlives this.
  DeviceUpdate(const ShardPlan& plan, DeviceContext& device, const optim::Optimizer& optimizer,
               ShardBuffer masters, bool separate_masters, ShardBuffer gradients);

  const ShardBuffer& masters() const override { return masters_; }
  DeviceContext& masters_device() override { return device_; }
  bool masters_on_host() const override { return false; }
  void masters_into_own_parameters(ParameterResidency& parameters) override;
  bool sums_squares_in_step() const override { return true; }
  bool step(ParameterResidency& parameters, std::int64_t step, float lr,
            std::vector<HostScalar>* slice_squares) override;
  void scale_gradients(float factor) override;
  void export_states(ParameterResidency& parameters, std::span<float* const> out) override;
  void import_states(ParameterResidency& parameters, std::span<const float* const> in) override;

 private:
  const ShardPlan& plan_;
  DeviceContext& device_;
  const optim::Optimizer& optimizer_;
  ShardBuffer masters_;
  const bool separate_masters_;
  ShardBuffer gradients_;
  std::vector<Tensor> states_;  // optimizer states, each (shard_numel) f32
};

}  // namespace zt::zero
