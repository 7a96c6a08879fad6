// ZeRO stages 1-3: shard ownership, the per-block hooks and the sharded optimizer step.
#include "sharding/sharded_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/all_gather_block.h"
#include "sharding/compute_dtype.h"
#include "sharding/device_update.h"
#include "sharding/full_parameters.h"
#include "sharding/gathered_parameters.h"
#include "sharding/host_transfer.h"
#include "sharding/offloaded_update.h"

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
    : dtype_(compute_dtype(inputs.config)),
      grad_dtype_(gradient_dtype(inputs.config)),
      groups_(inputs.lanes, static_cast<int>(inputs.config.zero.shard_group_size),
              stage == 3 ? static_cast<int>(inputs.config.zero.hpz_partition_size) : 0,
              inputs.config.zero.quantized_gradients),
      optimizer_(inputs.optimizer),
      device_(inputs.device),
      config_(inputs.config.zero),
      // Each shard group is a ZeRO world of its own (Note [Hybrid sharding]).
      layout_(make_flat_layout(inputs.model, groups_.group_size(), BlockPadding::kEachBlock)),
      plan_(layout_, groups_.group_size(), groups_.rank_in_group(),
            segment_elements(inputs.config)),
      memory_plan_(
          plan_memory({stage, dtype_, grad_dtype_, groups_.group_size(), layout_.padded_numel,
                       plan_.shard_numel(), inputs.optimizer.states_per_element(),
                       inputs.config.train.grad_accum_steps,
                       inputs.config.offload.optimizer != OffloadTarget::kNone,
                       inputs.config.offload.params == OffloadTarget::kCpu})),
      grad_views_(layout_.blocks.size()),
      block_grads_(layout_.blocks.size()),
      shard_fresh_(layout_.blocks.size(), true) {
  ZT_CHECK(stage >= 1 && stage <= 3, "ShardedStrategy runs stages 1-3");
  std::unique_ptr<OffloadedUpdate> offloaded;
  if (memory_plan_.offloaded_optimizer) {
    offloaded = std::make_unique<OffloadedUpdate>(plan_, device_, optimizer_, dtype_, grad_dtype_,
                                                  inputs.config.offload,
                                                  memory_plan_.offloaded_parameters, grad_shard_);
  }
  allocate(std::move(offloaded));
  initialize(static_cast<std::uint64_t>(inputs.config.run.seed));
  reducer_.emplace(groups_.gradients(), groups_.replicas(), plan_, grad_shard_, device_);
  if (inputs.config.zero.quantized_gradients) quantize_gradients(inputs.config.zero);
  // An offloaded update stages each block's reduced slices on the host as they become final.
  reducer_->on_block_reduced(
      [this](std::size_t block) { update_->block_reduced(block, *parameters_); });
  if (memory_plan_.full_parameters) {
    parameters_ =
        std::make_unique<FullParameters>(groups_.parameters(), layout_, plan_, full_params_);
  } else {
    parameters_ = std::make_unique<GatheredParameters>(
        groups_.parameters(), layout_, plan_, param_shard_, device_, config_,
        memory_plan_.offloaded_parameters, groups_.secondary());
  }
  publish_masters();  // the gathers overlap with the first forward
  if (!memory_plan_.transient_block_gradients) {
    for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
      grad_views_[b] = block_views(layout_, b, full_grads_);
    }
  }
}

void ShardedStrategy::quantize_gradients(const ZeroConfig& config) {
  ZT_CHECK(!memory_plan_.full_gradients,
           "qgZ quantizes the per-block reduce-scatters of stages 2-3 "
           "(check_quantized_gradients refuses it on stage 1)");
  const GradientExchange& exchange = groups_.gradient_exchange();
  const nn::math::BlockQuantFormat format{
      config.quantized_gradients_format == QuantizedFormat::kInt8 ? nn::math::QuantBits::kInt8
                                                                  : nn::math::QuantBits::kInt4,
      config.quantization_block};
  std::vector<QuantizationResidual> residuals;
  if (config.quantized_gradients_error_feedback) {
    // Per block: the errors of quantizing its G chunks (its padded size: step 1, made when
    // the node has several ranks) and of its M partial sums (padded / L: step 3, made when
    // there are several nodes), f32, counted as gradients.
    const int local = exchange.local_size();
    const int nodes = exchange.node_count();
    const auto chunks = [&](const BlockSlots& b) { return local > 1 ? b.padded_numel : 0; };
    const auto partials = [&](const BlockSlots& b) {
      return nodes > 1 ? b.padded_numel / local : 0;
    };
    std::int64_t total = 0;
    for (const BlockSlots& b : layout_.blocks) total += chunks(b) + partials(b);
    const ScopedAllocationName name("qgZ error feedback");
    quantization_residual_ = zeros(total, device_.tracker(), MemoryCategory::kGradients);
    std::int64_t offset = 0;
    for (const BlockSlots& b : layout_.blocks) {
      QuantizationResidual residual;
      if (chunks(b) > 0) residual.chunks = quantization_residual_.view(offset, Shape{chunks(b)});
      offset += chunks(b);
      if (partials(b) > 0) {
        residual.partials = quantization_residual_.view(offset, Shape{partials(b)});
      }
      offset += partials(b);
      residuals.push_back(std::move(residual));
    }
  }
  reducer_->quantize(exchange, format, std::move(residuals));
}

// Exactly the buffers the memory plan names, so the tracker's model-state bytes are the
// plan's (a test holds them to it).
void ShardedStrategy::allocate(std::unique_ptr<OffloadedUpdate> offloaded) {
  const ScopedAllocationName name("model states (ZeRO shards)");
  MemoryTracker& tracker = device_.tracker();
  const std::int64_t shard = plan_.shard_numel();
  if (memory_plan_.full_parameters) {
    full_params_ = zeros(layout_.padded_numel, tracker, MemoryCategory::kParameters, dtype_);
  } else if (memory_plan_.offloaded_parameters) {
    // The shard is the offloaded optimizer's compute-dtype copy, in host memory: each
    // gather brings a block's slices over first.
    param_shard_ = ShardBuffer::own(plan_, offloaded->host_parameters());
  } else {
    param_shard_ =
        ShardBuffer::own(plan_, zeros(shard, tracker, MemoryCategory::kParameters, dtype_));
  }
  if (memory_plan_.full_gradients) {
    full_grads_ = zeros(layout_.padded_numel, tracker, MemoryCategory::kGradients, grad_dtype_);
    grad_shard_ = ShardBuffer::in_place(plan_, full_grads_);
    full_folds_ = BlockFolds(layout_.blocks.size());
  } else {
    grad_shard_ =
        ShardBuffer::own(plan_, zeros(shard, tracker, MemoryCategory::kGradients, grad_dtype_));
  }
  if (offloaded) {
    // Masters and optimizer states are the offloaded optimizer's, in host memory.
    update_ = std::move(offloaded);
    return;
  }
  ShardBuffer masters;
  if (memory_plan_.separate_master) {
    masters = ShardBuffer::own(plan_, zeros(shard, tracker, MemoryCategory::kOptimizerStates));
  } else if (memory_plan_.full_parameters) {
    masters = ShardBuffer::in_place(plan_, full_params_);
  } else {
    masters = param_shard_;
  }
  update_ = std::make_unique<DeviceUpdate>(plan_, device_, optimizer_, std::move(masters),
                                           memory_plan_.separate_master, grad_shard_);
}

// Each rank fills only what it keeps (its master slices), from counter-based streams keyed
// by parameter, so the values equal the single-rank model's; the rest of a full parameter
// buffer arrives by the first all-gather, so initialization needs no full fp32 workspace.
void ShardedStrategy::initialize(std::uint64_t seed) {
  DeviceContext& master_device = update_->masters_device();
  update_->masters().for_each_slice([&](const Segment& segment, const Tensor& slice) {
    const std::int64_t slice_begin = plan_.slice_offset(segment, plan_.rank());
    write_from_host(master_device, slice, [&](std::int64_t first, std::span<float> out) {
      initialize_parameter_range(layout_, seed, slice_begin + first, out);
    });
  });
}

void ShardedStrategy::publish_masters() {
  update_->masters_into_own_parameters(*parameters_);
  parameters_->publish();
  parameters_->start_next_forward();
}

Tensor ShardedStrategy::block_region(const Tensor& flat, std::size_t block) const {
  const BlockSlots& slots = layout_.blocks.at(block);
  return flat.view(slots.offset, Shape{slots.padded_numel});
}

const std::vector<Tensor>& ShardedStrategy::parameters(std::size_t block) {
  return parameters_->parameters(block);
}

void ShardedStrategy::before_forward(std::size_t block) { parameters_->before_forward(block); }

void ShardedStrategy::after_forward(std::size_t block) { parameters_->after_forward(block); }

void ShardedStrategy::end_forward_only() { parameters_->end_forward_only(); }

void ShardedStrategy::before_backward(std::size_t block) {
  parameters_->before_backward(block);
  if (memory_plan_.transient_block_gradients) {
    // Without full fp32 gradients a block holds them only while in backward: a transient
    // buffer that is reduce-scattered into the shard (or folded into the full gradients) as
    // soon as the block is done. A tied
    // parameter's gradient adds into its source block's buffer, which then lives until the
    // source block's own backward reduces it.
    ensure_block_grads(block);
    for (std::size_t source : tie_sources(layout_, block)) ensure_block_grads(source);
    grad_views_[block] = block_local_views(layout_, block, block_grads_);
  }
}

void ShardedStrategy::ensure_block_grads(std::size_t block) {
  const ScopedAllocationName name("block gradients");
  if (block_grads_[block].defined()) return;
  block_grads_[block] =
      zeros(layout_.blocks[block].padded_numel, device_.tracker(), MemoryCategory::kCommBuffers);
}

void ShardedStrategy::after_backward(std::size_t block, bool last_micro_batch) {
  if (memory_plan_.full_gradients) {
    // Full gradients accumulate over micro-batches and are reduced once, at the boundary,
    // in place: each rank's shard is its own slices of the reduced buffer.
    if (memory_plan_.transient_block_gradients) fold_block_grads(block);
    if (last_micro_batch) reducer_->reduce_block(block, block_region(full_grads_, block), false);
  } else {
    reducer_->reduce_block(block, std::move(block_grads_[block]), !shard_fresh_[block],
                           last_micro_batch);
    shard_fresh_[block] = false;
    grad_views_[block].clear();
  }
  parameters_->after_backward(block, last_micro_batch);
}

void ShardedStrategy::fold_block_grads(std::size_t block) {
  full_folds_.fold(device_.ops(), block, block_grads_[block], block_region(full_grads_, block));
  block_grads_[block] = Tensor();
  grad_views_[block].clear();
}

void ShardedStrategy::prepare_update(std::int64_t update_step, float lr) {
  update_->prepare(*parameters_, update_step, lr);
}

GradientNormSquared ShardedStrategy::finish_gradients() {
  wait_for_reductions();
  // Padding slots hold zero gradients (no parameter reads them), so they add nothing.
  // Each slice's Σg² is enqueued without a wait; one wait then reads them all (no host read
  // per slice). The sum over the ranks is the caller's, in the all-reduce that sums the
  // step's loss too.
  slice_squares_.clear();
  grad_shard_.for_each_slice([&](const Segment&, const Tensor& slice) {
    slice_squares_.push_back(device_.ops().sum_of_squares(slice));
  });
  return shard_norm_squared(sum_of_slice_squares());
}

GradientNormSquared ShardedStrategy::finish_gradients_and_update(
    std::int64_t step, float lr, const std::function<void()>& before_update) {
  if (!update_->sums_squares_in_step()) {
    return ZeroStrategy::finish_gradients_and_update(step, lr, before_update);
  }
  wait_for_reductions();
  before_update();
  // The update reads each slice's Σg² in its own pass (Note [The gradient norm in the
  // update's pass]): the same values finish_gradients() enqueues, read after the refresh or
  // prefetch is submitted.
  slice_squares_.clear();
  update(step, lr, &slice_squares_);
  return shard_norm_squared(sum_of_slice_squares());
}

void ShardedStrategy::wait_for_reductions() {
  full_folds_.check_all_folded();
  reducer_->drain();
}

GradientNormSquared ShardedStrategy::shard_norm_squared(double local) const {
  // The caller sums the parts over the world; the replicas' shards are copies of the first
  // group's, so only its ranks' parts count (adding zeros is exact).
  return {groups_.in_first_replica() ? local : 0.0, true};
}

double ShardedStrategy::sum_of_slice_squares() {
  // one wait, then the slices' sums added in slice order in double
  device_.compute_stream().synchronize();
  double local = 0.0;
  for (const HostScalar& squares : slice_squares_) local += squares;
  return local;
}

void ShardedStrategy::scale_gradients(float factor) { update_->scale_gradients(factor); }

void ShardedStrategy::optimizer_step(std::int64_t step, float lr) { update(step, lr, nullptr); }

void ShardedStrategy::update(std::int64_t step, float lr, std::vector<HostScalar>* slice_squares) {
  // In fp32 the master is the parameter storage a gather reads from (the full parameters'
  // own slices in stages 1-2, the parameter shard in stage 3): every gather must be done
  // before it changes. Stage 3's gathered copies are stale after the step anyway.
  parameters_->before_update();
  const bool own_slices_changed = update_->step(*parameters_, step, lr, slice_squares);
  if (own_slices_changed) parameters_->publish();  // stages 1-2: to every rank
  parameters_->start_next_forward();
}

void ShardedStrategy::zero_gradients() {
  update_->discard_gradients();
  std::fill(shard_fresh_.begin(), shard_fresh_.end(), true);
  if (memory_plan_.full_gradients && memory_plan_.transient_block_gradients) {
    // each block's first fold writes its region of full_grads_ (Note [The first fold writes])
    full_folds_.start_step();
    return;
  }
  device_.ops().fill_zero_bytes(grad_shard_.storage());  // full_grads_ when the shard lies in place
}

std::vector<float> ShardedStrategy::full_parameters() {
  // Export the fp32 master weights: in fp32 stages 1-2 they are the full parameters once
  // the refresh is done; otherwise gather every rank's master slices. A delayed update
  // (overlap_step) lands first, so the export is the model after every step so far.
  if (update_->finish_delayed(*parameters_)) parameters_->publish();
  parameters_->wait_for_readers();
  if (update_->masters().is_in_place()) {
    return unpadded_parameters(layout_, full_params_, device_);
  }
  Tensor full = zeros(layout_.padded_numel, device_.tracker(), MemoryCategory::kWorkspace);
  ShardBuffer masters = update_->masters();
  if (update_->masters_on_host()) {
    // The collectives run on the device: bring the host masters over first.
    masters = ShardBuffer::own(
        plan_, zeros(plan_.shard_numel(), device_.tracker(), MemoryCategory::kWorkspace));
    device_.ops().copy(update_->masters().storage(), masters.storage());
  }
  std::vector<std::shared_ptr<comm::Work>> works;
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    for (auto& work : all_gather_block(groups_.parameters(), plan_, b, masters, full)) {
      works.push_back(std::move(work));
    }
  }
  for (const auto& work : works) work->wait();
  return unpadded_parameters(layout_, full, device_);
}

StateShard ShardedStrategy::state_shard() const {
  StateShard shard{plan_.shard_numel(), {}};
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    for (const Segment& segment : plan_.segments(b)) {
      append_state_runs(layout_, plan_.slice_offset(segment, plan_.rank()),
                        plan_.slice_numel(segment), segment.shard_offset, shard.runs);
    }
  }
  return shard;
}

std::vector<std::string> ShardedStrategy::extra_state_names() const {
  return update_->extra_state_names();
}

void ShardedStrategy::export_states(std::span<float* const> out) {
  parameters_->wait_for_readers();
  update_->export_states(*parameters_, out);
}

void ShardedStrategy::import_states(std::span<const float* const> in) {
  if (update_->finish_delayed(*parameters_)) parameters_->publish();
  parameters_->before_update();  // gathered from the masters being replaced
  update_->import_states(*parameters_, in);
  parameters_->publish();
  parameters_->start_next_forward();
}

}  // namespace zt::zero
