// OffloadedUpdate: the shard's update in host memory (offload.optimizer; Note [The update as
// a part]): the masters and states are an OffloadedOptimizer's, each block's reduced
// gradients go to the host as soon as they are final, and the update runs over the whole
// shard at the step, per block while backward goes on (early updates), or during the next
// step (offload.overlap_step, one step stale).
#pragma once

#include <memory>
#include <optional>

#include "core/config/config.h"
#include "offload/offloaded_optimizer.h"
#include "optim/optimizer.h"
#include "sharding/shard_plan.h"
#include "sharding/shard_update.h"

namespace zt::zero {

class OffloadedUpdate final : public ShardUpdate {
 public:
  // `gradients` is the strategy's reduced gradient shard (assigned by the caller after this
  // is built, before the first block is reduced); with `offloaded_parameters` the parameter
  // shard is host_parameters() and no parameters are sent over after an update. Allocates the
  // host side, and on `device` a widening workspace when the gradients are not f32.
  OffloadedUpdate(const ShardPlan& plan, DeviceContext& device, const optim::Optimizer& optimizer,
                  DType compute_dtype, DType gradient_dtype, const OffloadConfig& config,
                  bool offloaded_parameters, const ShardBuffer& gradients);

  // The compute-dtype copy of the masters in host memory: the parameter shard itself when
  // stage 3's parameters are offloaded.
  const Tensor& host_parameters() const { return optimizer_->host_parameters(); }

  const ShardBuffer& masters() const override { return masters_; }
  DeviceContext& masters_device() override { return optimizer_->host(); }
  bool masters_on_host() const override { return true; }
  void masters_into_own_parameters(ParameterResidency& parameters) override;
  void block_reduced(std::size_t block, ParameterResidency& parameters) override;
  void prepare(ParameterResidency& parameters, std::int64_t update_step, float lr) override;
  bool sums_squares_in_step() const override { return false; }
  bool step(ParameterResidency& parameters, std::int64_t step, float lr,
            std::vector<HostScalar>* slice_squares) override;
  void scale_gradients(float factor) override;
  void discard_gradients() override;
  bool finish_delayed(ParameterResidency& parameters) override;
  std::vector<std::string> extra_state_names() const override;
  void export_states(ParameterResidency& parameters, std::span<float* const> out) override;
  void import_states(ParameterResidency& parameters, std::span<const float* const> in) override;
  const MemoryTracker* host_tracker() const override { return &optimizer_->host_tracker(); }

 private:
  // The host masters' compute-dtype copy into this rank's own slices on the device.
  void send_own_parameters(ParameterResidency& parameters);
  // The slice's gradients as f32: the slice itself, or widened into the workspace.
  Tensor f32_gradients(const Segment& segment);
  // The own parameters as f32 in shard order, out of or into host memory (overlap_step's
  // checkpoint), one slice widened at a time.
  void copy_own_parameters_to_host(ParameterResidency& parameters, float* out);
  void copy_own_parameters_from_host(ParameterResidency& parameters, const float* in);
  Tensor f32_scratch(std::int64_t numel);

  const ShardPlan& plan_;
  DeviceContext& device_;
  const int states_per_element_;
  const bool offloaded_parameters_;
  const bool overlap_step_;  // offload.overlap_step: each update runs during the next step
  const ShardBuffer& gradients_;
  // The host tracker lives in it: declared first, so it outlives every view of its buffers.
  std::unique_ptr<offload::OffloadedOptimizer> optimizer_;
  ShardBuffer masters_;  // the host masters, as a shard
  struct EarlyUpdate {
    std::int64_t step = 0;
    float lr = 0;
  };
  std::optional<EarlyUpdate> early_update_;  // this step's, while blocks finish backward
  Tensor grad_workspace_;                    // (largest slice) f32: gradients not f32
};

}  // namespace zt::zero
