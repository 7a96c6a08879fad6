// DDP: full replicas, bucketed gradient all-reduce overlapping backward.
#include "sharding/ddp_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/compute_dtype.h"
#include "sharding/gradient_elements.h"

namespace zt::zero {
namespace {

std::int64_t bucket_elements(const Config& config) {
  return std::max<std::int64_t>(
      1, config.zero.reduce_bucket_size_bytes / static_cast<std::int64_t>(sizeof(float)));
}

// Elements of gradients converted to fp32 at a time for the optimizer (narrow gradients).
constexpr std::int64_t kOptimizerChunkElements = std::int64_t{1} << 16;

}  // namespace

DdpStrategy::DdpStrategy(const StrategyInputs& inputs)
    : lanes_(inputs.lanes),
      optimizer_(inputs.optimizer),
      layout_(make_flat_layout(inputs.model, inputs.lanes.world_size())),
      tracker_(inputs.device.tracker()),
      block_grads_(layout_.blocks.size()),
      buckets_(layout_.padded_numel, bucket_elements(inputs.config)) {
  const Shape flat{layout_.padded_numel};
  const DType dtype = compute_dtype(inputs.config);
  const DType grad_dtype = gradient_dtype(inputs.config);
  const MemoryPlan plan =
      plan_memory({0, dtype, grad_dtype, lanes_.world_size(), layout_.padded_numel,
                   layout_.padded_numel, optimizer_.states_per_element(), 1});
  transient_block_grads_ = plan.transient_block_gradients;
  params_ = Tensor::zeros(flat, dtype, inputs.device.tracker(), MemoryCategory::kParameters);
  // In fp32 the parameters are the master weights; otherwise a separate fp32 copy is.
  master_ = dtype == DType::kF32 ? params_
                                 : Tensor::zeros(flat, DType::kF32, inputs.device.tracker(),
                                                 MemoryCategory::kOptimizerStates);
  grads_ = Tensor::zeros(flat, grad_dtype, inputs.device.tracker(), MemoryCategory::kGradients);
  if (transient_block_grads_) {
    grad_workspace_ = Tensor::zeros(Shape{std::min(kOptimizerChunkElements, layout_.padded_numel)},
                                    DType::kF32, inputs.device.tracker(), MemoryCategory::kWorkspace);
  }
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    states_.push_back(
        Tensor::zeros(flat, DType::kF32, inputs.device.tracker(), MemoryCategory::kOptimizerStates));
    state_spans_.push_back(states_.back().view(0, Shape{layout_.numel}).span<float>());
  }
  // Every rank initializes the same values from the seed, so no broadcast is needed.
  initialize_parameters(layout_, static_cast<std::uint64_t>(inputs.config.run.seed), master_);
  copy_master_to_compute(master_, params_);
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    param_views_.push_back(block_views(layout_, b, params_));
    grad_views_.push_back(transient_block_grads_ ? std::vector<Tensor>{}
                                                 : block_views(layout_, b, grads_));
  }
}

void DdpStrategy::before_backward(std::size_t block) {
  if (!transient_block_grads_) return;
  // A tied parameter's gradient adds into its source block's buffer, folded when the source
  // block's own backward ends.
  for (std::size_t b : tie_sources(layout_, block)) ensure_block_grads(b);
  ensure_block_grads(block);
  grad_views_[block] = block_local_views(layout_, block, block_grads_);
}

void DdpStrategy::ensure_block_grads(std::size_t block) {
  if (block_grads_[block].defined()) return;
  block_grads_[block] = Tensor::zeros(Shape{layout_.blocks[block].padded_numel}, DType::kF32,
                                      tracker_, MemoryCategory::kCommBuffers);
}

void DdpStrategy::after_backward(std::size_t block, bool last_micro_batch) {
  if (transient_block_grads_) {
    const BlockSlots& slots = layout_.blocks[block];
    add_into(block_grads_[block], grads_.view(slots.offset, Shape{slots.padded_numel}), false);
    block_grads_[block] = Tensor();
    grad_views_[block].clear();
  }
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
  return sum_of_squares(grads_.view(0, Shape{layout_.numel}));
}

void DdpStrategy::scale_gradients(float factor) { scale_in_place(grads_, factor); }

void DdpStrategy::optimizer_step(std::int64_t step, float lr) {
  if (!transient_block_grads_) {
    optimizer_.step(master_.view(0, Shape{layout_.numel}).span<float>(),
                    grads_.view(0, Shape{layout_.numel}).span<float>(), state_spans_, step, lr);
  } else {
    // Narrow gradients reach the (elementwise) optimizer as fp32, a chunk at a time.
    std::vector<std::span<float>> states(state_spans_.size());
    for (std::int64_t begin = 0; begin < layout_.numel; begin += grad_workspace_.numel()) {
      const std::int64_t count = std::min(grad_workspace_.numel(), layout_.numel - begin);
      const auto first = static_cast<std::size_t>(begin);
      const auto n = static_cast<std::size_t>(count);
      for (std::size_t i = 0; i < states.size(); ++i) states[i] = state_spans_[i].subspan(first, n);
      std::span<float> grads = grad_workspace_.span<float>().subspan(0, n);
      copy_to_f32(grads_.view(begin, Shape{count}), grads);
      optimizer_.step(master_.view(begin, Shape{count}).span<float>(), grads, states, step, lr);
    }
  }
  copy_master_to_compute(master_, params_);
}

void DdpStrategy::zero_gradients() { fill_zero_bytes(grads_); }

std::vector<float> DdpStrategy::full_parameters() {
  return unpadded_parameters(layout_, master_.span<float>());
}

}  // namespace zt::zero
