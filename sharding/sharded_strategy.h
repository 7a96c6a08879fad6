// ZeRO stages 1, 2 and 3 (DESIGN §6). Every rank keeps fp32 master weights and optimizer
// states only for its shard (its slice of every segment, see ShardPlan); stage 2 also
// keeps only its gradient shard, reduce-scattering each block's gradients right after the
// block's backward; stage 3 also keeps only its parameter shard and all-gathers each block
// around its forward and backward (ParameterGatherer).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sharding/gradient_reducer.h"
#include "sharding/parameter_gatherer.h"
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
  void after_backward(std::size_t block, bool last_micro_batch) override;
  double finish_gradients() override;
  void scale_gradients(float factor) override;
  void optimizer_step(std::int64_t step, float lr) override;
  void zero_gradients() override;
  std::vector<float> full_parameters() override;
  comm::CommCounters comm_counters() const override { return comm_.counters(); }

 private:
  void initialize(std::uint64_t seed);
  void refresh_full_parameters();  // stages 1-2: all-gather updated master slices
  void wait_for_refresh(std::size_t block);
  // All-gathers block `block`'s segments from `shard` (this rank's slices) into `flat`.
  std::vector<std::shared_ptr<comm::Work>> all_gather_block(std::size_t block, const Tensor& shard,
                                                            const Tensor& flat);
  Tensor block_region(const Tensor& flat, std::size_t block) const;
  void ensure_block_grads(std::size_t block);  // stages 2-3

  const int stage_;
  const DType dtype_;  // compute dtype of parameter copies
  comm::Communicator& comm_;
  const optim::Optimizer& optimizer_;
  MemoryTracker& tracker_;
  const ZeroConfig config_;
  FlatLayout layout_;
  ShardPlan plan_;

  Tensor full_params_;          // stages 1-2: (padded_numel) every parameter, compute dtype
  Tensor full_grads_;           // stage 1: (padded_numel) gradients accumulated over micro-batches
  Tensor param_shard_;          // stage 3: (shard_numel) this rank's parameters
  Tensor grad_shard_;           // (shard_numel) reduced gradients of this rank's slices
  Tensor master_shard_;         // (shard_numel) fp32 master weights the optimizer updates
  Tensor staging_shard_;        // stages 1-2, not fp32: master shard in the compute dtype
  std::vector<Tensor> states_;  // optimizer states, each (shard_numel)
  std::vector<std::span<float>> state_spans_;
  Tensor norm_buffer_;  // (1) squared gradient norm, all-reduced

  std::vector<std::vector<Tensor>> param_views_;  // stages 1-2
  std::vector<std::vector<Tensor>> grad_views_;   // current gradient views per block
  std::vector<Tensor> block_grads_;               // stages 2-3: transient per-block gradients
  std::vector<bool> shard_fresh_;                 // block's shard slices not yet written
  std::vector<std::vector<std::shared_ptr<comm::Work>>> refresh_works_;  // per block

  std::optional<GradientReducer> reducer_;
  std::optional<ParameterGatherer> gatherer_;  // stage 3
};

}  // namespace zt::zero
