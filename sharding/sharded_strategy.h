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

#include "sharding/block_folds.h"
#include "sharding/gradient_reducer.h"
#include "sharding/memory_plan.h"
#include "sharding/parameter_residency.h"
#include "sharding/shard_buffer.h"
#include "sharding/shard_groups.h"
#include "sharding/shard_plan.h"
#include "sharding/shard_update.h"
#include "sharding/zero_strategy.h"

namespace zt::zero {

class OffloadedUpdate;

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
  const MemoryTracker* host_offload_tracker() const override { return update_->host_tracker(); }

 private:
  // The buffers the memory plan names, and the update part (`offloaded`, when the optimizer
  // is offloaded, already holds the host side: an offloaded parameter shard is its copy).
  void allocate(std::unique_ptr<OffloadedUpdate> offloaded);
  void initialize(std::uint64_t seed);
  // The masters are new (initialized or loaded): their compute-dtype image goes to the
  // parameters this rank keeps, and from there to every rank (all-gathers in flight).
  void publish_masters();
  Tensor block_region(const Tensor& flat, std::size_t block) const;
  void ensure_block_grads(std::size_t block);  // transient per-block gradients
  // Full gradients in a narrower dtype: adds the block's transient fp32 gradients into them.
  void fold_block_grads(std::size_t block);
  // Waits for the step's reduce-scatters (every block folded first).
  void wait_for_reductions();
  // Σ slice_squares_ in slice order, after one wait for the device.
  double sum_of_slice_squares();
  // This rank's part of the world's gradient norm squared, from its shard's Σg².
  GradientNormSquared shard_norm_squared(double local) const;
  // optimizer_step; with `slice_squares` the update also returns each slice's Σg² there, in
  // slice order (Note [The gradient norm in the update's pass]).
  void update(std::int64_t step, float lr, std::vector<HostScalar>* slice_squares);
  // qgZ (zero.quantized_gradients): the reducer quantizes over the group's two hops, with
  // error feedback when asked for.
  void quantize_gradients(const ZeroConfig& config);

  const DType dtype_;       // compute dtype of parameter copies
  const DType grad_dtype_;  // standing gradients (precision.grad_dtype)
  ShardGroups groups_;      // where each collective goes (Note [Hybrid sharding])
  const optim::Optimizer& optimizer_;
  DeviceContext& device_;  // allocates and computes every buffer here
  const ZeroConfig config_;
  FlatLayout layout_;
  ShardPlan plan_;
  MemoryPlan memory_plan_;
  // How the shard is updated, on the device or the host (Note [The update as a part] in
  // sharding/shard_update.h). Declared before the buffers, so an offloaded update's host
  // tracker outlives their views of its memory.
  std::unique_ptr<ShardUpdate> update_;
  Tensor full_params_;       // full_parameters: (padded_numel) compute dtype
  Tensor full_grads_;        // full_gradients: (padded_numel) accumulated over micro-batches
  ShardBuffer param_shard_;  // stage 3: this rank's parameters, compute dtype
  ShardBuffer grad_shard_;   // reduced gradients: in place in full_grads_ or its own
  std::vector<HostScalar> slice_squares_;  // finish_gradients's Σg² per slice, read after one wait

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
