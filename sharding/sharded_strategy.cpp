// ZeRO stages 1-3: shard ownership, the per-block hooks and the sharded optimizer step.
#include "sharding/sharded_strategy.h"

#include <algorithm>

#include "core/error.h"
#include "sharding/all_gather_block.h"
#include "sharding/compute_dtype.h"
#include "sharding/full_parameters.h"
#include "sharding/gathered_parameters.h"
#include "sharding/host_transfer.h"

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
      overlap_step_(inputs.config.offload.overlap_step),
      grad_views_(layout_.blocks.size()),
      block_grads_(layout_.blocks.size()),
      shard_fresh_(layout_.blocks.size(), true) {
  ZT_CHECK(stage >= 1 && stage <= 3, "ShardedStrategy runs stages 1-3");
  if (memory_plan_.offloaded_optimizer) {
    offloaded_ = std::make_unique<offload::OffloadedOptimizer>(
        device_, optimizer_, plan_.shard_numel(), dtype_, inputs.config.offload);
  }
  allocate();
  initialize(static_cast<std::uint64_t>(inputs.config.run.seed));
  reducer_.emplace(groups_.gradients(), groups_.replicas(), plan_, grad_shard_, device_);
  if (inputs.config.zero.quantized_gradients) quantize_gradients(inputs.config.zero);
  if (offloaded_) {
    // Each block's reduced slices go to the host as soon as they are final, while backward
    // goes on with the blocks before it.
    reducer_->on_block_reduced([this](std::size_t block) {
      for (const Segment& segment : plan_.segments(block)) {
        // Gradients in another dtype are widened into one workspace, reused by the next slice.
        offloaded_->stage_gradients(segment.shard_offset, f32_gradients(segment),
                                    grad_shard_.dtype() != DType::kF32);
        // Nothing can veto this step's update: it runs now, while backward goes on.
        if (early_update_) {
          offloaded_->update_early(segment.shard_offset, own_parameters(segment),
                                   early_update_->step, early_update_->lr);
        }
      }
    });
  }
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
void ShardedStrategy::allocate() {
  const ScopedAllocationName name("model states (ZeRO shards)");
  MemoryTracker& tracker = device_.tracker();
  const std::int64_t shard = plan_.shard_numel();
  if (memory_plan_.full_parameters) {
    full_params_ = zeros(layout_.padded_numel, tracker, MemoryCategory::kParameters, dtype_);
  } else if (memory_plan_.offloaded_parameters) {
    // The shard is the offloaded optimizer's compute-dtype copy, in host memory: each
    // gather brings a block's slices over first.
    param_shard_ = ShardBuffer::own(plan_, offloaded_->host_parameters());
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
  if (offloaded_) {
    // The host's gradients are f32: narrower ones are widened on the device on the way.
    if (grad_dtype_ != DType::kF32) {
      grad_workspace_ = zeros(largest_slice_numel(), tracker, MemoryCategory::kWorkspace);
    }
    // Masters and optimizer states are the offloaded optimizer's, in host memory.
    master_shard_ = ShardBuffer::own(plan_, offloaded_->master());
    return;
  }
  if (memory_plan_.separate_master) {
    master_shard_ =
        ShardBuffer::own(plan_, zeros(shard, tracker, MemoryCategory::kOptimizerStates));
  } else if (memory_plan_.full_parameters) {
    master_shard_ = ShardBuffer::in_place(plan_, full_params_);
  } else {
    master_shard_ = param_shard_;
  }
  for (int i = 0; i < optimizer_.states_per_element(); ++i) {
    states_.push_back(zeros(shard, tracker, MemoryCategory::kOptimizerStates));
  }
}

// Each rank fills only what it keeps (its master slices), from counter-based streams keyed
// by parameter, so the values equal the single-rank model's; the rest of a full parameter
// buffer arrives by the first all-gather, so initialization needs no full fp32 workspace.
void ShardedStrategy::initialize(std::uint64_t seed) {
  DeviceContext& master_device = offloaded_ ? offloaded_->host() : device_;
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor& slice) {
    const std::int64_t slice_begin = plan_.slice_offset(segment, plan_.rank());
    write_from_host(master_device, slice, [&](std::int64_t first, std::span<float> out) {
      initialize_parameter_range(layout_, seed, slice_begin + first, out);
    });
  });
}

void ShardedStrategy::publish_masters() {
  if (offloaded_) {
    // The device's compute copy of the rank's own slices (the rest arrives by all-gather);
    // an offloaded parameter shard is that copy.
    offloaded_->convert_masters();
    send_own_parameters();
  } else if (memory_plan_.separate_master) {
    round_masters_into_own_parameters();
  }
  parameters_->publish();
  parameters_->start_next_forward();
}

std::int64_t ShardedStrategy::largest_slice_numel() const {
  std::int64_t largest = 0;
  for (std::size_t b = 0; b < layout_.blocks.size(); ++b) {
    for (const Segment& segment : plan_.segments(b)) {
      largest = std::max(largest, plan_.slice_numel(segment));
    }
  }
  return largest;
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

Tensor ShardedStrategy::f32_gradients(const Segment& segment) {
  const Tensor slice = grad_shard_.slice(segment);
  if (slice.dtype() == DType::kF32) return slice;
  const Tensor out = grad_workspace_.view(0, Shape{slice.numel()});
  device_.ops().cast(slice, out);
  return out;
}

void ShardedStrategy::prepare_update(std::int64_t update_step, float lr) {
  if (offloaded_ && offloaded_->supports_early_updates() && !overlap_step_) {
    // The gathers of the last step read the parameters these updates rewrite.
    parameters_->wait_for_readers();
    early_update_ = EarlyUpdate{update_step, lr};
  }
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
  if (offloaded_) return ZeroStrategy::finish_gradients_and_update(step, lr, before_update);
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

void ShardedStrategy::scale_gradients(float factor) {
  if (offloaded_) {
    // The gradients the step uses are the host's copy, staged as each block was reduced.
    offloaded_->scale_gradients(factor);
    return;
  }
  grad_shard_.for_each_slice(
      [&](const Segment&, const Tensor& slice) { device_.ops().scale(slice, factor); });
}

void ShardedStrategy::optimizer_step(std::int64_t step, float lr) { update(step, lr, nullptr); }

void ShardedStrategy::update(std::int64_t step, float lr, std::vector<HostScalar>* slice_squares) {
  // In fp32 the master is the parameter storage a gather reads from (the full parameters'
  // own slices in stages 1-2, the parameter shard in stage 3): every gather must be done
  // before it changes. Stage 3's gathered copies are stale after the step anyway.
  parameters_->before_update();
  const bool own_slices_changed =
      offloaded_ ? offloaded_step(step, lr) : device_step(step, lr, slice_squares);
  if (own_slices_changed) parameters_->publish();  // stages 1-2: to every rank
  parameters_->start_next_forward();
}

bool ShardedStrategy::device_step(std::int64_t step, float lr,
                                  std::vector<HostScalar>* slice_squares) {
  // The optimizer is elementwise, so one call per slice updates exactly what one call over
  // a contiguous shard would. Each call is one pass (Note [The optimizer in one pass]): the
  // gradients in their stored dtype, and the rank's own compute-dtype parameters rounded
  // from the new masters, ready for the refresh or the next gathers.
  std::vector<Tensor> states(states_.size());
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor& master) {
    const Shape slice{master.numel()};
    for (std::size_t i = 0; i < states_.size(); ++i) {
      states[i] = states_[i].view(segment.shard_offset, slice);
    }
    const Tensor compute = memory_plan_.separate_master ? own_parameters(segment) : Tensor();
    const Tensor grads = grad_shard_.slice(segment);
    if (slice_squares != nullptr) {
      slice_squares->push_back(
          optimizer_.step_summing_squares(master, grads, states, compute, step, lr, device_));
    } else {
      optimizer_.step(master, grads, states, compute, step, lr, device_);
    }
  });
  return true;
}

void ShardedStrategy::round_masters_into_own_parameters() {
  parameters_->wait_for_readers();  // the gathers in flight read the own slices
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor& master) {
    copy_master_to_compute(device_.ops(), master, own_parameters(segment));
  });
}

bool ShardedStrategy::offloaded_step(std::int64_t step, float lr) {
  if (early_update_) {
    // Every block's update ran as its gradients became final; wait for the last ones.
    ZT_CHECK(early_update_->step == step && early_update_->lr == lr,
             "the step's early updates used another step or lr");
    early_update_.reset();
    offloaded_->finish_early_updates();
    return true;
  }
  if (overlap_step_) {
    // The last step's update has run during this step: its parameters go over now, and this
    // step's update runs during the next step's forward and backward (one step stale).
    const bool sent = finish_delayed_update();
    offloaded_->start_delayed_update(step, lr);
    return sent;
  }
  // The gradients are on the host already (staged as each block was reduced): the CPU
  // optimizer updates every master there, and the compute-dtype parameters come back into
  // this rank's own slices.
  offloaded_->update(step, lr);
  send_own_parameters();
  return true;
}

void ShardedStrategy::send_own_parameters() {
  // An offloaded parameter shard is the host copy itself: nothing to send.
  if (memory_plan_.offloaded_parameters) return;
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor&) {
    offloaded_->send_parameters(segment.shard_offset, own_parameters(segment));
  });
  offloaded_->wait_for_sends();
}

bool ShardedStrategy::finish_delayed_update() {
  if (!offloaded_ || !offloaded_->finish_delayed_update()) return false;
  send_own_parameters();
  return true;
}

void ShardedStrategy::zero_gradients() {
  // A step whose update was skipped (fp16 overflow) may still have gradients travelling to
  // the host: they read what is about to be zeroed.
  if (offloaded_) offloaded_->quiesce();
  early_update_.reset();
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
  if (finish_delayed_update()) parameters_->publish();
  parameters_->wait_for_readers();
  if (master_shard_.is_in_place()) return unpadded_parameters(layout_, full_params_, device_);
  Tensor full = zeros(layout_.padded_numel, device_.tracker(), MemoryCategory::kWorkspace);
  ShardBuffer masters = master_shard_;
  if (offloaded_) {
    // The collectives run on the device: bring the host masters over first.
    masters = ShardBuffer::own(
        plan_, zeros(plan_.shard_numel(), device_.tracker(), MemoryCategory::kWorkspace));
    device_.ops().copy(offloaded_->master(), masters.storage());
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
  // overlap_step: between steps an update is in flight and the parameters the next forward
  // uses are one update behind the masters; they are saved so a resume continues exactly.
  if (overlap_step_) return {std::string(kParametersInUse)};
  return {};
}

void ShardedStrategy::copy_own_parameters_to_host(float* out) {
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor&) {
    const Tensor own = own_parameters(segment);
    std::span<float> to(out + segment.shard_offset, static_cast<std::size_t>(own.numel()));
    if (own.dtype() == DType::kF32) {
      read_to_host(device_, own, to);
      return;
    }
    const Tensor wide = f32_scratch(own.numel());
    device_.ops().cast(own, wide);
    read_to_host(device_, wide, to);
  });
}

void ShardedStrategy::copy_own_parameters_from_host(const float* in) {
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor&) {
    const Tensor own = own_parameters(segment);
    std::span<const float> from(in + segment.shard_offset, static_cast<std::size_t>(own.numel()));
    if (own.dtype() == DType::kF32) {
      write_host_values(device_, own, from);
      return;
    }
    const Tensor wide = f32_scratch(own.numel());
    write_host_values(device_, wide, from);
    device_.ops().cast(wide, own);  // exact: the values were this dtype's, widened
  });
}

Tensor ShardedStrategy::f32_scratch(std::int64_t numel) {
  const ScopedAllocationName name("checkpoint: parameters widened");
  return Tensor::empty(Shape{numel}, DType::kF32, device_.tracker(), MemoryCategory::kWorkspace);
}

void ShardedStrategy::export_states(std::span<float* const> out) {
  const std::size_t states = static_cast<std::size_t>(optimizer_.states_per_element());
  ZT_CHECK(out.size() == 1 + states + extra_state_names().size(),
           "export_states: one buffer per state tensor");
  // An update in flight (overlap_step) lands in the masters, but its parameters are not
  // sent: the run goes on exactly as it would have without the save.
  if (offloaded_) offloaded_->wait_for_delayed_update();
  parameters_->wait_for_readers();
  const auto shard_span = [&](float* base) {
    return std::span<float>(base, static_cast<std::size_t>(plan_.shard_numel()));
  };
  if (overlap_step_) copy_own_parameters_to_host(out[1 + states]);
  if (offloaded_) {
    read_to_host(offloaded_->host(), offloaded_->master(), shard_span(out[0]));
    offloaded_->export_states(out.subspan(1, states));
    return;
  }
  // The slices of every segment tile the shard, padding included (zero in every buffer).
  master_shard_.for_each_slice([&](const Segment& segment, const Tensor& slice) {
    read_to_host(
        device_, slice,
        std::span<float>(out[0] + segment.shard_offset, static_cast<std::size_t>(slice.numel())));
  });
  for (std::size_t i = 0; i < states_.size(); ++i) {
    read_to_host(device_, states_[i], shard_span(out[1 + i]));
  }
}

void ShardedStrategy::import_states(std::span<const float* const> in) {
  const std::size_t states = static_cast<std::size_t>(optimizer_.states_per_element());
  const bool with_parameters_in_use = in.size() == 2 + states;
  ZT_CHECK(in.size() == 1 + states || (with_parameters_in_use && overlap_step_),
           "import_states: one buffer per state tensor");
  if (finish_delayed_update()) parameters_->publish();
  parameters_->before_update();  // gathered from the masters being replaced
  const auto shard_span = [&](const float* base) {
    return std::span<const float>(base, static_cast<std::size_t>(plan_.shard_numel()));
  };
  if (offloaded_) {
    write_host_values(offloaded_->host(), offloaded_->master(), shard_span(in[0]));
    offloaded_->import_states(in.subspan(1, states));
  } else {
    master_shard_.for_each_slice([&](const Segment& segment, const Tensor& slice) {
      write_host_values(device_, slice,
                        std::span<const float>(in[0] + segment.shard_offset,
                                               static_cast<std::size_t>(slice.numel())));
    });
    for (std::size_t i = 0; i < states_.size(); ++i) {
      write_host_values(device_, states_[i], shard_span(in[1 + i]));
    }
  }
  if (!with_parameters_in_use) {
    publish_masters();
    return;
  }
  // overlap_step saved between an update's landing and its parameters' sending: the
  // parameters in use come back as saved, the masters' compute copy waits to be sent by
  // the next step, as the update in flight's would have been.
  offloaded_->convert_masters();
  copy_own_parameters_from_host(in[1 + states]);
  offloaded_->resume_landed_update();
  parameters_->publish();
  parameters_->start_next_forward();
}

}  // namespace zt::zero
