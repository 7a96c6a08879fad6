// DDP: full replicas, bucketed gradient all-reduce overlapping backward.
#include "sharding/ddp_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/compute_dtype.h"

namespace zt::zero {
namespace {

std::int64_t bucket_elements(const Config& config) {
  return std::max<std::int64_t>(
      1, config.zero.reduce_bucket_size_bytes / static_cast<std::int64_t>(sizeof(float)));
}

}  // namespace

DdpStrategy::DdpStrategy(const StrategyInputs& inputs)
    : lanes_(inputs.lanes),
      optimizer_(inputs.optimizer),
      layout_(make_flat_layout(inputs.model, inputs.lanes.world_size())),
      buckets_(layout_.padded_numel, bucket_elements(inputs.config)) {
  const Shape flat{layout_.padded_numel};
  const DType dtype = compute_dtype(inputs.config);
  params_ = Tensor::zeros(flat, dtype, inputs.tracker, MemoryCategory::kParameters);
  // In fp32 the parameters are the master weights; otherwise a separate fp32 copy is.
  master_ = dtype == DType::kF32 ? params_
                                 : Tensor::zeros(flat, DType::kF32, inputs.tracker,
                                                 MemoryCategory::kOptimizerStates);
  grads_ = Tensor::zeros(flat, DType::kF32, inputs.tracker, MemoryCategory::kGradients);
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    states_.push_back(
        Tensor::zeros(flat, DType::kF32, inputs.tracker, MemoryCategory::kOptimizerStates));
    state_spans_.push_back(states_.back().view(0, Shape{layout_.numel}).span<float>());
  }
  // Every rank initializes the same values from the seed, so no broadcast is needed.
  initialize_parameters(layout_, static_cast<std::uint64_t>(inputs.config.run.seed), master_);
  copy_master_to_compute(master_, params_);
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    param_views_.push_back(block_views(layout_, b, params_));
    grad_views_.push_back(block_views(layout_, b, grads_));
  }
}

void DdpStrategy::after_backward(std::size_t block, bool last_micro_batch) {
  // Gradients accumulate locally across micro-batches and are reduced once, at the
  // boundary (DDP's no_sync): the same sum, a fraction of the traffic.
  if (!last_micro_batch) return;
  for (const Bucket& bucket : buckets_.take_ready(layout_.blocks.at(block).offset)) {
    in_flight_.push_back(lanes_.gradients.all_reduce(
        grads_.view(bucket.offset, Shape{bucket.numel}), comm::ReduceOp::kSum));
  }
}

double DdpStrategy::finish_gradients() {
  ZT_CHECK(buckets_.all_taken(), "a gradient bucket was never launched");
  for (const auto& work : in_flight_) work->wait();
  in_flight_.clear();
  buckets_.reset();
  double norm_squared = 0.0;
  for (float g : grads_.view(0, Shape{layout_.numel}).span<float>()) norm_squared += double{g} * g;
  return norm_squared;
}

void DdpStrategy::scale_gradients(float factor) {
  for (float& g : grads_.span<float>()) g *= factor;
}

void DdpStrategy::optimizer_step(std::int64_t step, float lr) {
  optimizer_.step(master_.view(0, Shape{layout_.numel}).span<float>(),
                  grads_.view(0, Shape{layout_.numel}).span<float>(), state_spans_, step, lr);
  copy_master_to_compute(master_, params_);
}

void DdpStrategy::zero_gradients() {
  std::span<float> grads = grads_.span<float>();
  std::fill(grads.begin(), grads.end(), 0.0f);
}

std::vector<float> DdpStrategy::full_parameters() {
  return unpadded_parameters(layout_, master_.span<float>());
}

}  // namespace zt::zero
