// ZeRO stages 1-3: shard ownership, the per-block hooks and the sharded optimizer step.
#include "sharding/sharded_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/compute_dtype.h"

namespace zt::zero {
namespace {

std::int64_t segment_elements(const Config& config) {
  return config.zero.reduce_bucket_size_bytes / static_cast<std::int64_t>(sizeof(float));
}

Tensor zeros(std::int64_t numel, MemoryTracker& tracker, MemoryCategory category,
             DType dtype = DType::kF32) {
  return Tensor::zeros(Shape{numel}, dtype, tracker, category);
}

}  // namespace

ShardedStrategy::ShardedStrategy(const StrategyInputs& inputs, int stage)
    : stage_(stage),
      dtype_(compute_dtype(inputs.config)),
      comm_(inputs.comm),
      optimizer_(inputs.optimizer),
      tracker_(inputs.tracker),
      config_(inputs.config.zero),
      layout_(make_flat_layout(inputs.model, inputs.comm.world_size(), BlockPadding::kEachBlock)),
      plan_(layout_, inputs.comm.world_size(), inputs.comm.rank(), segment_elements(inputs.config)),
      grad_views_(layout_.blocks.size()),
      block_grads_(layout_.blocks.size()),
      shard_fresh_(layout_.blocks.size(), true),
      refresh_works_(layout_.blocks.size()) {
  ZT_CHECK(stage >= 1 && stage <= 3, "ShardedStrategy runs stages 1-3");
  const std::int64_t shard = plan_.shard_numel();
  if (stage_ < 3) {
    full_params_ = zeros(layout_.padded_numel, tracker_, MemoryCategory::kParameters, dtype_);
  }
  if (stage_ == 1) full_grads_ = zeros(layout_.padded_numel, tracker_, MemoryCategory::kGradients);
  if (stage_ == 3) param_shard_ = zeros(shard, tracker_, MemoryCategory::kParameters, dtype_);
  if (stage_ < 3 && dtype_ != DType::kF32) {
    // The compute-dtype image of the master shard that the all-gather after a step sends.
    staging_shard_ = zeros(shard, tracker_, MemoryCategory::kCommBuffers, dtype_);
  }
  grad_shard_ = zeros(shard, tracker_, MemoryCategory::kGradients);
  master_shard_ = zeros(shard, tracker_, MemoryCategory::kOptimizerStates);
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    states_.push_back(zeros(shard, tracker_, MemoryCategory::kOptimizerStates));
    state_spans_.push_back(states_.back().span<float>());
  }
  norm_buffer_ = zeros(1, tracker_, MemoryCategory::kCommBuffers);
  initialize(static_cast<std::uint64_t>(inputs.config.run.seed));
  reducer_.emplace(comm_, plan_, grad_shard_, tracker_);
  if (stage_ == 3) {
    gatherer_.emplace(comm_, layout_, plan_, param_shard_, tracker_, config_);
  } else {
    for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
      param_views_.push_back(block_views(layout_, b, full_params_));
    }
  }
  if (stage_ == 1) {
    for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
      grad_views_[b] = block_views(layout_, b, full_grads_);
    }
  }
}

// Each rank fills only what it holds, from the same counter-based streams, so the values
// equal the single-rank model's without any full copy on a stage-3 rank.
void ShardedStrategy::initialize(std::uint64_t seed) {
  if (stage_ < 3 && dtype_ == DType::kF32) initialize_parameters(layout_, seed, full_params_);
  if (stage_ < 3 && dtype_ != DType::kF32) {
    Tensor full = zeros(layout_.padded_numel, tracker_, MemoryCategory::kWorkspace);
    initialize_parameters(layout_, seed, full);
    copy_master_to_compute(full, full_params_);
  }
  float* master = master_shard_.data_as<float>();
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    for (const Segment& segment : plan_.segments(b)) {
      const std::int64_t slice = plan_.slice_numel(segment);
      initialize_parameter_range(layout_, seed, plan_.slice_offset(segment, plan_.rank()),
                                 {master + segment.shard_offset, static_cast<std::size_t>(slice)});
    }
  }
  if (stage_ == 3) copy_master_to_compute(master_shard_, param_shard_);
}

Tensor ShardedStrategy::block_region(const Tensor& flat, std::size_t block) const {
  const BlockSlots& slots = layout_.blocks.at(block);
  return flat.view(slots.offset, Shape{slots.padded_numel});
}

const std::vector<Tensor>& ShardedStrategy::parameters(std::size_t block) {
  if (stage_ == 3) return gatherer_->acquire(block);
  return param_views_.at(block);
}

void ShardedStrategy::wait_for_refresh(std::size_t block) {
  for (const auto& work : refresh_works_[block]) work->wait();
  refresh_works_[block].clear();
}

void ShardedStrategy::before_forward(std::size_t block) {
  if (stage_ < 3) {
    wait_for_refresh(block);  // the all-gather after the last step, overlapped until now
    return;
  }
  gatherer_->acquire(block);
  for (std::int64_t ahead = 1; ahead <= config_.prefetch_blocks; ++ahead) {
    gatherer_->prefetch(block + static_cast<std::size_t>(ahead));
  }
}

void ShardedStrategy::after_forward(std::size_t block) {
  // The last block's backward comes next: keep it gathered.
  if (stage_ == 3 && block + 1 < layout_.blocks.size()) gatherer_->release(block);
}

void ShardedStrategy::before_backward(std::size_t block) {
  if (stage_ == 3) {
    gatherer_->acquire(block);
    for (std::int64_t behind = 1; behind <= config_.prefetch_blocks; ++behind) {
      if (block >= static_cast<std::size_t>(behind)) {
        gatherer_->prefetch(block - static_cast<std::size_t>(behind));
      }
    }
  }
  if (stage_ >= 2) {
    // Stages 2-3 hold full gradients only for the block in backward: a transient buffer
    // that is reduce-scattered into the shard as soon as the block is done.
    // A tied parameter's gradient adds into its source block's buffer, which then lives
    // until the source block's own backward reduces it.
    ensure_block_grads(block);
    for (std::size_t source : tie_sources(layout_, block)) ensure_block_grads(source);
    grad_views_[block] = block_local_views(layout_, block, block_grads_);
  }
}

void ShardedStrategy::ensure_block_grads(std::size_t block) {
  if (block_grads_[block].defined()) return;
  block_grads_[block] =
      zeros(layout_.blocks[block].padded_numel, tracker_, MemoryCategory::kCommBuffers);
}

void ShardedStrategy::after_backward(std::size_t block, bool last_micro_batch) {
  if (stage_ == 1) {
    // Stage 1 accumulates full gradients and reduces once, at the boundary.
    if (last_micro_batch) reducer_->reduce_block(block, block_region(full_grads_, block), false);
    return;
  }
  reducer_->reduce_block(block, std::move(block_grads_[block]), !shard_fresh_[block]);
  shard_fresh_[block] = false;
  grad_views_[block].clear();
  if (stage_ == 3) gatherer_->release(block);
}

double ShardedStrategy::finish_gradients() {
  reducer_->drain();
  // Padding slots hold zero gradients (no parameter reads them), so they add nothing.
  double local = 0.0;
  for (float g : grad_shard_.span<float>()) local += double{g} * g;
  norm_buffer_.data_as<float>()[0] = static_cast<float>(local);
  comm_.all_reduce(norm_buffer_, comm::ReduceOp::kSum)->wait();
  return norm_buffer_.data_as<float>()[0];
}

void ShardedStrategy::scale_gradients(float factor) {
  for (float& g : grad_shard_.span<float>()) g *= factor;
}

void ShardedStrategy::optimizer_step(std::int64_t step, float lr) {
  optimizer_.step(master_shard_.span<float>(), grad_shard_.span<float>(), state_spans_, step, lr);
  if (stage_ == 3) {
    copy_master_to_compute(master_shard_, param_shard_);
    gatherer_->release_all();  // persistent copies are stale now
    return;
  }
  refresh_full_parameters();
}

void ShardedStrategy::refresh_full_parameters() {
  // fp32 gathers the master shard itself; otherwise its compute-dtype image, so the wire
  // carries 2 bytes per parameter like the compute copies it refreshes.
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) wait_for_refresh(b);
  const Tensor& source = dtype_ == DType::kF32 ? master_shard_ : staging_shard_;
  copy_master_to_compute(master_shard_, source);
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    refresh_works_[b] = all_gather_block(b, source, full_params_);
  }
}

std::vector<std::shared_ptr<comm::Work>> ShardedStrategy::all_gather_block(std::size_t block,
                                                                           const Tensor& shard,
                                                                           const Tensor& flat) {
  std::vector<std::shared_ptr<comm::Work>> works;
  for (const Segment& segment : plan_.segments(block)) {
    works.push_back(
        comm_.all_gather(shard.view(segment.shard_offset, Shape{plan_.slice_numel(segment)}),
                         flat.view(segment.offset, Shape{segment.numel})));
  }
  return works;
}

void ShardedStrategy::zero_gradients() {
  if (stage_ == 1) {
    std::span<float> grads = full_grads_.span<float>();
    std::fill(grads.begin(), grads.end(), 0.0f);
  }
  std::span<float> shard = grad_shard_.span<float>();
  std::fill(shard.begin(), shard.end(), 0.0f);
  std::fill(shard_fresh_.begin(), shard_fresh_.end(), true);
}

std::vector<float> ShardedStrategy::full_parameters() {
  // Export the fp32 master weights: gather every rank's master shard.
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) wait_for_refresh(b);
  Tensor full = zeros(layout_.padded_numel, tracker_, MemoryCategory::kWorkspace);
  std::vector<std::shared_ptr<comm::Work>> works;
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    for (auto& work : all_gather_block(b, master_shard_, full)) works.push_back(std::move(work));
  }
  for (const auto& work : works) work->wait();
  return unpadded_parameters(layout_, full.span<float>());
}

}  // namespace zt::zero
