// ZeRO stages 1, 2 and 3. Every rank keeps optimizer states only for its shard
// (its slice of every segment, see ShardPlan); stage 2 also keeps only its gradient shard,
// reduce-scattering each block's gradients right after the block's backward; stage 3 also
// keeps only its parameter shard and all-gathers each block around its forward and
// backward (ParameterGatherer). Which buffers stand, and where shards lie inside them, is
// the MemoryPlan's decision: a shard in place in a full buffer costs no second copy.
// Under hybrid sharding (zero.shard_group_size) all of this happens inside the rank's shard
// group, and the reduced gradient shards are all-reduced across the groups (ShardGroups).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "offload/offloaded_optimizer.h"
#include "sharding/block_folds.h"
#include "sharding/gradient_reducer.h"
#include "sharding/memory_plan.h"
#include "sharding/parameter_residency.h"
#include "sharding/shard_buffer.h"
#include "sharding/shard_groups.h"
#include "sharding/shard_plan.h"
#include "sharding/zero_strategy.h"

namespace zt::zero {

class ShardedStrategy final : public ZeroStrategy {
 public:
  ShardedStrategy(const StrategyInputs& inputs, int stage);

  const FlatLayout& layout() const override { return layout_; }
  const std::vector<Tensor>& parameters(std::size_t block) override;
  const std::vector<Tensor>& gradients(std::size_t block) override { return grad_views_.at(block); }
  void before_forward(std::size_t block) override;
  void after_forward(std::size_t block) override;
  void before_backward(std::size_t block) override;
  void end_forward_only() override;
  void after_backward(std::size_t block, bool last_micro_batch) override;
  void prepare_update(std::int64_t update_step, float lr) override;
  GradientNormSquared finish_gradients() override;
  GradientNormSquared finish_gradients_and_update(
      std::int64_t step, float lr, const std::function<void()>& before_update) override;
  void scale_gradients(float factor) override;
  void optimizer_step(std::int64_t step, float lr) override;
  void zero_gradients() override;
  std::vector<float> full_parameters() override;
  StateShard state_shard() const override;
  int checkpoint_files(int) const override { return groups_.group_size(); }
  std::optional<int> checkpoint_file(int) const override {
    if (!groups_.in_first_replica()) return std::nullopt;
    return groups_.rank_in_group();
  }
  std::vector<std::string> extra_state_names() const override;
  void export_states(std::span<float* const> out) override;
  void import_states(std::span<const float* const> in) override;
  comm::CommCounters comm_counters() const override { return groups_.counters(); }
  std::int64_t peak_gathered_parameter_bytes() const override {
    return parameters_->peak_gathered_bytes();
  }
  const MemoryTracker* host_offload_tracker() const override {
    return offloaded_ ? &offloaded_->host_tracker() : nullptr;
  }

 private:
  void allocate();
  void initialize(std::uint64_t seed);
  // The masters are new (initialized or loaded): their compute-dtype image goes to the
  // parameters this rank keeps, and from there to every rank (all-gathers in flight).
  void publish_masters();
  // The parameters this rank keeps (its slices of the full parameters, or its shard) as f32
  // in shard order, out of or into host memory (overlap_step's checkpoint).
  void copy_own_parameters_to_host(float* out);
  void copy_own_parameters_from_host(const float* in);
  // A transient f32 device buffer of `numel` elements (one slice widened at a time).
  Tensor f32_scratch(std::int64_t numel);
  Tensor block_region(const Tensor& flat, std::size_t block) const;
  // This rank's compute-dtype parameters of `segment` on the device: its slice of the full
  // parameters (stages 1-2) or of the parameter shard (stage 3).
  Tensor own_parameters(const Segment& segment) const {
    return parameters_->own_parameters(segment);
  }
  std::int64_t largest_slice_numel() const;
  void ensure_block_grads(std::size_t block);  // transient per-block gradients
  // Full gradients in a narrower dtype: adds the block's transient fp32 gradients into them.
  void fold_block_grads(std::size_t block);
  // The slice's gradients as f32 (for the offloaded optimizer's host copy): the slice
  // itself, or converted into the workspace.
  Tensor f32_gradients(const Segment& segment);

  const DType dtype_;       // compute dtype of parameter copies
  const DType grad_dtype_;  // standing gradients (precision.grad_dtype)
  ShardGroups groups_;      // where each collective goes (Note [Hybrid sharding])
  const optim::Optimizer& optimizer_;
  DeviceContext& device_;  // allocates and computes every buffer here
  const ZeroConfig config_;
  FlatLayout layout_;
  ShardPlan plan_;
  MemoryPlan memory_plan_;
  // offload.optimizer = "cpu": masters and states in host memory, updated there. Declared
  // before the buffers, so its host tracker outlives master_shard_'s view of its master.
  std::unique_ptr<offload::OffloadedOptimizer> offloaded_;
  struct EarlyUpdate {
    std::int64_t step = 0;
    float lr = 0;
  };
  std::optional<EarlyUpdate> early_update_;  // this step's, while blocks finish backward
  const bool overlap_step_;  // offload.overlap_step: each update runs during the next step
  // overlap_step: waits for the update in flight and sends its parameters to the device.
  // Returns whether there was one.
  bool finish_delayed_update();
  // The update of this rank's shard, on the device or the host (Note [Offloaded step order]);
  // each returns whether the rank's own parameter slices changed.
  // Waits for the step's reduce-scatters (every block folded first).
  void wait_for_reductions();
  // Σ slice_squares_ in slice order, after one wait for the device.
  double sum_of_slice_squares();
  // This rank's part of the world's gradient norm squared, from its shard's Σg².
  GradientNormSquared shard_norm_squared(double local) const;
  // optimizer_step; with `slice_squares` the update also returns each slice's Σg² there, in
  // slice order (Note [The gradient norm in the update's pass]).
  void update(std::int64_t step, float lr, std::vector<HostScalar>* slice_squares);
  // Returns whether the rank's own slices changed; `slice_squares` as update's.
  bool device_step(std::int64_t step, float lr, std::vector<HostScalar>* slice_squares);
  bool offloaded_step(std::int64_t step, float lr);
  // Separate masters: their compute-dtype image into the rank's own parameter slices.
  void round_masters_into_own_parameters();
  // The offloaded masters' compute-dtype copy into this rank's own slices on the device.
  void send_own_parameters();
  // qgZ (zero.quantized_gradients): the reducer quantizes over the group's two hops, with
  // error feedback when asked for.
  void quantize_gradients(const ZeroConfig& config);

  Tensor full_params_;          // full_parameters: (padded_numel) compute dtype
  Tensor full_grads_;           // full_gradients: (padded_numel) accumulated over micro-batches
  ShardBuffer param_shard_;     // stage 3: this rank's parameters, compute dtype
  ShardBuffer grad_shard_;      // reduced gradients: in place in full_grads_ or its own
  ShardBuffer master_shard_;    // f32 master weights: the parameter storage itself in fp32
  std::vector<Tensor> states_;  // optimizer states, each (shard_numel) f32
  std::vector<HostScalar> slice_squares_;  // finish_gradients's Σg² per slice, read after one wait
  Tensor grad_workspace_;                  // (largest slice) f32: offloaded, gradients not f32

  std::vector<std::vector<Tensor>> grad_views_;  // current gradient views per block
  std::vector<Tensor> block_grads_;              // transient per-block gradients
  std::vector<bool> shard_fresh_;                // block's shard slices not yet written
  // Full gradients with transient block gradients: block_grads_ into full_grads_, the first
  // fold of a step writing (Note [The first fold writes])
  BlockFolds full_folds_{0};

  // qgZ's error feedback: every block's rounding errors (Note [Quantized gradient
  // reduce-scatters]), f32; undefined without it.
  Tensor quantization_residual_;

  std::optional<GradientReducer> reducer_;
  // Where the compute-dtype parameters live: full (stages 1-2) or gathered (stage 3).
  std::unique_ptr<ParameterResidency> parameters_;
};

}  // namespace zt::zero
