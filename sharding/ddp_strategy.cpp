// DDP: full replicas, bucketed gradient all-reduce overlapping backward.
#include "sharding/ddp_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/compute_dtype.h"
#include "sharding/host_transfer.h"

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
      device_(inputs.device),
      block_grads_(layout_.blocks.size()),
      folds_(layout_.blocks.size()),
      buckets_(layout_.padded_numel, bucket_elements(inputs.config)) {
  const Shape flat{layout_.padded_numel};
  const DType dtype = compute_dtype(inputs.config);
  const DType grad_dtype = gradient_dtype(inputs.config);
  const MemoryPlan plan =
      plan_memory({0, dtype, grad_dtype, lanes_.world_size(), layout_.padded_numel,
                   layout_.padded_numel, optimizer_.states_per_element(), 1});
  transient_block_grads_ = plan.transient_block_gradients;
  MemoryTracker& tracker = device_.tracker();
  const ScopedAllocationName name("model states (DDP)");
  params_ = Tensor::zeros(flat, dtype, tracker, MemoryCategory::kParameters);
  // In fp32 the parameters are the master weights; otherwise a separate fp32 copy is.
  master_ = dtype == DType::kF32
                ? params_
                : Tensor::zeros(flat, DType::kF32, tracker, MemoryCategory::kOptimizerStates);
  grads_ = Tensor::zeros(flat, grad_dtype, tracker, MemoryCategory::kGradients);
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    // Padded like the parameters; the padding's gradients are zero, so it stays zero.
    states_.push_back(Tensor::zeros(flat, DType::kF32, tracker, MemoryCategory::kOptimizerStates));
  }
  // Every rank initializes the same values from the seed, so no broadcast is needed.
  initialize_parameters(layout_, static_cast<std::uint64_t>(inputs.config.run.seed), master_,
                        device_);
  copy_master_to_compute(device_.ops(), master_, params_);
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
                                      device_.tracker(), MemoryCategory::kCommBuffers);
}

void DdpStrategy::after_backward(std::size_t block, bool last_micro_batch) {
  if (transient_block_grads_) {
    const BlockSlots& slots = layout_.blocks[block];
    folds_.fold(device_.ops(), block, block_grads_[block],
                grads_.view(slots.offset, Shape{slots.padded_numel}));
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

void DdpStrategy::wait_for_reductions() {
  ZT_CHECK(buckets_.all_taken(), "a gradient bucket was never launched");
  folds_.check_all_folded();
  for (const auto& work : in_flight_) work->wait();
  in_flight_.clear();
  buckets_.reset();
}

GradientNormSquared DdpStrategy::finish_gradients() {
  wait_for_reductions();
  // Every rank holds the all-reduced gradient: its norm is the global one.
  return {device_.ops().sum_of_squares(grads_), false};  // the padding adds zeros
}

GradientNormSquared DdpStrategy::finish_gradients_and_update(
    std::int64_t step, float lr, const std::function<void()>& before_update) {
  wait_for_reductions();
  before_update();
  return {update(step, lr, true), false};
}

void DdpStrategy::scale_gradients(float factor) { device_.ops().scale(grads_, factor); }

void DdpStrategy::optimizer_step(std::int64_t step, float lr) { update(step, lr, false); }

HostScalar DdpStrategy::update(std::int64_t step, float lr, bool sum_squares) {
  // One pass over the whole flat buffer: the gradients in their stored dtype, the master and
  // states updated, and the compute-dtype parameters rounded from the new master (Note [The
  // optimizer in one pass]). In fp32 the master is the parameters and there is no copy. The
  // padding between and after parameters (Note [Why parameters are aligned]) has zero
  // gradients, so it stays zero.
  const Tensor compute = params_.dtype() == DType::kF32 ? Tensor() : params_;
  if (sum_squares) {
    return optimizer_.step_summing_squares(master_, grads_, states_, compute, step, lr, device_);
  }
  optimizer_.step(master_, grads_, states_, compute, step, lr, device_);
  return 0.0;
}

void DdpStrategy::zero_gradients() {
  if (transient_block_grads_) {
    // each block's first fold writes its part (Note [The first fold writes])
    folds_.start_step();
    return;
  }
  device_.ops().fill_zero_bytes(grads_);
}

std::vector<float> DdpStrategy::full_parameters() {
  return unpadded_parameters(layout_, master_, device_);
}

// Every rank holds every state: each saves the slice [rank, rank + 1) x padded_numel / world,
// so the ranks share the writing, and each loads all of it.
StateShard DdpStrategy::state_shard() const {
  const std::int64_t chunk = layout_.padded_numel / lanes_.world_size();
  StateShard shard{chunk, {}};
  append_state_runs(layout_, lanes_.rank() * chunk, chunk, 0, shard.runs);
  return shard;
}

StateShard DdpStrategy::load_shard() const {
  StateShard shard{layout_.padded_numel, {}};
  append_state_runs(layout_, 0, layout_.padded_numel, 0, shard.runs);
  return shard;
}

Tensor DdpStrategy::state_tensor(std::size_t index) const {
  return index == 0 ? master_ : states_.at(index - 1);
}

void DdpStrategy::export_states(std::span<float* const> out) {
  ZT_CHECK(out.size() == 1 + states_.size(), "export_states: one buffer per state tensor");
  const std::int64_t chunk = layout_.padded_numel / lanes_.world_size();
  const std::int64_t begin = lanes_.rank() * chunk;
  for (std::size_t t = 0; t < out.size(); ++t) {
    // The padding comes with it, zero as it is on the device.
    read_to_host(device_, state_tensor(t).view(begin, Shape{chunk}),
                 std::span<float>(out[t], static_cast<std::size_t>(chunk)));
  }
}

void DdpStrategy::import_states(std::span<const float* const> in) {
  ZT_CHECK(in.size() == 1 + states_.size(), "import_states: one buffer per state tensor");
  for (std::size_t t = 0; t < in.size(); ++t) {
    write_host_values(
        device_, state_tensor(t),
        std::span<const float>(in[t], static_cast<std::size_t>(layout_.padded_numel)));
  }
  copy_master_to_compute(device_.ops(), master_, params_);
}

}  // namespace zt::zero
