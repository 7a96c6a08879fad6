// ZeRO stage 0 (DDP): every rank holds full parameters, gradients and optimizer states;
// gradients are all-reduced in buckets launched as soon as backward has produced them.
#pragma once

#include <memory>
#include <vector>

#include "sharding/block_folds.h"
#include "sharding/gradient_buckets.h"
#include "sharding/memory_plan.h"
#include "sharding/zero_strategy.h"

namespace zt::zero {

class DdpStrategy final : public ZeroStrategy {
 public:
  explicit DdpStrategy(const StrategyInputs& inputs);

  const FlatLayout& layout() const override { return layout_; }
  const std::vector<Tensor>& parameters(std::size_t block) override { return param_views_[block]; }
  const std::vector<Tensor>& gradients(std::size_t block) override { return grad_views_[block]; }
  void before_forward(std::size_t) override {}
  void after_forward(std::size_t) override {}
  void before_backward(std::size_t block) override;
  void after_backward(std::size_t block, bool last_micro_batch) override;
  GradientNormSquared finish_gradients() override;
  GradientNormSquared finish_gradients_and_update(
      std::int64_t step, float lr, const std::function<void()>& before_update) override;
  void scale_gradients(float factor) override;
  void optimizer_step(std::int64_t step, float lr) override;
  void zero_gradients() override;
  std::vector<float> full_parameters() override;
  StateShard state_shard() const override;
  StateShard load_shard() const override;
  void export_states(std::span<float* const> out) override;
  void import_states(std::span<const float* const> in) override;
  comm::CommCounters comm_counters() const override { return lanes_.counters(); }

 private:
  void ensure_block_grads(std::size_t block);
  // Waits for the step's bucket all-reduces: every rank then holds the reduced gradient.
  void wait_for_reductions();
  // The update over the whole flat buffer; with `sum_squares` it returns the gradient norm
  // squared it read (Note [The gradient norm in the update's pass]), else 0.
  HostScalar update(std::int64_t step, float lr, bool sum_squares);
  // The master (0) or optimizer state (1 + i), its real elements only.
  Tensor state_tensor(std::size_t index) const;

  comm::CommLanes lanes_;  // gradients carries the bucket all-reduces
  const optim::Optimizer& optimizer_;
  FlatLayout layout_;
  Tensor params_;                       // (padded_numel) compute dtype: what modules read
  Tensor master_;                       // (padded_numel) f32 master weights; params_ itself in fp32
  Tensor grads_;                        // (padded_numel) precision.grad_dtype
  DeviceContext& device_;               // allocates and computes every buffer here
  bool transient_block_grads_ = false;  // backward writes fp32 per block, folded into grads_
  std::vector<Tensor> block_grads_;     // transient per-block fp32 gradients
  BlockFolds folds_;                    // block_grads_ into grads_, the first fold writing
  std::vector<Tensor> states_;          // optimizer states, each (numel) f32 views
  std::vector<std::vector<Tensor>> param_views_;
  std::vector<std::vector<Tensor>> grad_views_;
  GradientBuckets buckets_;
  std::vector<std::shared_ptr<comm::Work>> in_flight_;
};

}  // namespace zt::zero
