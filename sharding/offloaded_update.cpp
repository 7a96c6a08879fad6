// The shard's update on the host: gradients staged per block, the CPU optimizer at the step,
// per block (early) or during the next step (overlap_step), parameters sent back.
#include "sharding/offloaded_update.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "sharding/host_transfer.h"
#include "sharding/zero_strategy.h"

namespace zt::zero {
namespace {

std::int64_t largest_slice_numel(const ShardPlan& plan) {
  std::int64_t largest = 0;
  for (std::size_t b = 0; b < plan.block_count(); ++b) {
    for (const Segment& segment : plan.segments(b)) {
      largest = std::max(largest, plan.slice_numel(segment));
    }
  }
  return largest;
}

}  // namespace

OffloadedUpdate::OffloadedUpdate(const ShardPlan& plan, DeviceContext& device,
                                 const optim::Optimizer& optimizer, DType compute_dtype,
                                 DType gradient_dtype, const OffloadConfig& config,
                                 bool offloaded_parameters, const ShardBuffer& gradients)
    : plan_(plan),
      device_(device),
      states_per_element_(optimizer.states_per_element()),
      offloaded_parameters_(offloaded_parameters),
      overlap_step_(config.overlap_step),
      gradients_(gradients),
      optimizer_(std::make_unique<offload::OffloadedOptimizer>(
          device, optimizer, plan.shard_numel(), compute_dtype, config)),
      masters_(ShardBuffer::own(plan, optimizer_->master())) {
  if (gradient_dtype != DType::kF32) {
    // The host's gradients are f32: narrower ones are widened on the device on the way.
    const ScopedAllocationName name("model states (ZeRO shards)");
    grad_workspace_ = Tensor::zeros(Shape{largest_slice_numel(plan)}, DType::kF32, device.tracker(),
                                    MemoryCategory::kWorkspace);
  }
}

void OffloadedUpdate::masters_into_own_parameters(ParameterResidency& parameters) {
  // The device's compute copy of the rank's own slices (the rest arrives by all-gather); an
  // offloaded parameter shard is that copy.
  optimizer_->convert_masters();
  send_own_parameters(parameters);
}

void OffloadedUpdate::send_own_parameters(ParameterResidency& parameters) {
  // An offloaded parameter shard is the host copy itself: nothing to send.
  if (offloaded_parameters_) return;
  masters_.for_each_slice([&](const Segment& segment, const Tensor&) {
    optimizer_->send_parameters(segment.shard_offset, parameters.own_parameters(segment));
  });
  optimizer_->wait_for_sends();
}

Tensor OffloadedUpdate::f32_gradients(const Segment& segment) {
  const Tensor slice = gradients_.slice(segment);
  if (slice.dtype() == DType::kF32) return slice;
  const Tensor out = grad_workspace_.view(0, Shape{slice.numel()});
  device_.ops().cast(slice, out);
  return out;
}

void OffloadedUpdate::block_reduced(std::size_t block, ParameterResidency& parameters) {
  // Each block's reduced slices go to the host as soon as they are final, while backward
  // goes on with the blocks before it.
  for (const Segment& segment : plan_.segments(block)) {
    // Gradients in another dtype are widened into one workspace, reused by the next slice.
    optimizer_->stage_gradients(segment.shard_offset, f32_gradients(segment),
                                gradients_.dtype() != DType::kF32);
    // Nothing can veto this step's update: it runs now, while backward goes on.
    if (early_update_) {
      optimizer_->update_early(segment.shard_offset, parameters.own_parameters(segment),
                               early_update_->step, early_update_->lr);
    }
  }
}

void OffloadedUpdate::prepare(ParameterResidency& parameters, std::int64_t update_step, float lr) {
  if (optimizer_->supports_early_updates() && !overlap_step_) {
    // The gathers of the last step read the parameters these updates rewrite.
    parameters.wait_for_readers();
    early_update_ = EarlyUpdate{update_step, lr};
  }
}

bool OffloadedUpdate::step(ParameterResidency& parameters, std::int64_t step, float lr,
                           std::vector<HostScalar>*) {
  if (early_update_) {
    // Every block's update ran as its gradients became final; wait for the last ones.
    ZT_CHECK(early_update_->step == step && early_update_->lr == lr,
             "the step's early updates used another step or lr");
    early_update_.reset();
    optimizer_->finish_early_updates();
    return true;
  }
  if (overlap_step_) {
    // The last step's update has run during this step: its parameters go over now, and this
    // step's update runs during the next step's forward and backward (one step stale).
    const bool sent = finish_delayed(parameters);
    optimizer_->start_delayed_update(step, lr);
    return sent;
  }
  // The gradients are on the host already (staged as each block was reduced): the CPU
  // optimizer updates every master there, and the compute-dtype parameters come back into
  // this rank's own slices.
  optimizer_->update(step, lr);
  send_own_parameters(parameters);
  return true;
}

void OffloadedUpdate::scale_gradients(float factor) {
  // The gradients the step uses are the host's copy, staged as each block was reduced.
  optimizer_->scale_gradients(factor);
}

void OffloadedUpdate::discard_gradients() {
  // A step whose update was skipped (fp16 overflow) may still have gradients travelling to
  // the host: they read what is about to be zeroed.
  optimizer_->quiesce();
  early_update_.reset();
}

bool OffloadedUpdate::finish_delayed(ParameterResidency& parameters) {
  if (!optimizer_->finish_delayed_update()) return false;
  send_own_parameters(parameters);
  return true;
}

std::vector<std::string> OffloadedUpdate::extra_state_names() const {
  // overlap_step: between steps an update is in flight and the parameters the next forward
  // uses are one update behind the masters; they are saved so a resume continues exactly.
  if (overlap_step_) return {std::string(kParametersInUse)};
  return {};
}

void OffloadedUpdate::export_states(ParameterResidency& parameters, std::span<float* const> out) {
  const auto states = static_cast<std::size_t>(states_per_element_);
  ZT_CHECK(out.size() == 1 + states + extra_state_names().size(),
           "export_states: one buffer per state tensor");
  // An update in flight (overlap_step) lands in the masters, but its parameters are not
  // sent: the run goes on exactly as it would have without the save.
  optimizer_->wait_for_delayed_update();
  if (overlap_step_) copy_own_parameters_to_host(parameters, out[1 + states]);
  read_to_host(optimizer_->host(), optimizer_->master(),
               std::span<float>(out[0], static_cast<std::size_t>(plan_.shard_numel())));
  optimizer_->export_states(out.subspan(1, states));
}

void OffloadedUpdate::import_states(ParameterResidency& parameters,
                                    std::span<const float* const> in) {
  const auto states = static_cast<std::size_t>(states_per_element_);
  const bool with_parameters_in_use = in.size() == 2 + states;
  ZT_CHECK(in.size() == 1 + states || (with_parameters_in_use && overlap_step_),
           "import_states: one buffer per state tensor");
  write_host_values(optimizer_->host(), optimizer_->master(),
                    std::span<const float>(in[0], static_cast<std::size_t>(plan_.shard_numel())));
  optimizer_->import_states(in.subspan(1, states));
  if (!with_parameters_in_use) {
    masters_into_own_parameters(parameters);
    return;
  }
  // overlap_step saved between an update's landing and its parameters' sending: the
  // parameters in use come back as saved, the masters' compute copy waits to be sent by
  // the next step, as the update in flight's would have been.
  optimizer_->convert_masters();
  copy_own_parameters_from_host(parameters, in[1 + states]);
  optimizer_->resume_landed_update();
}

void OffloadedUpdate::copy_own_parameters_to_host(ParameterResidency& parameters, float* out) {
  masters_.for_each_slice([&](const Segment& segment, const Tensor&) {
    const Tensor own = parameters.own_parameters(segment);
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

void OffloadedUpdate::copy_own_parameters_from_host(ParameterResidency& parameters,
                                                    const float* in) {
  masters_.for_each_slice([&](const Segment& segment, const Tensor&) {
    const Tensor own = parameters.own_parameters(segment);
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

Tensor OffloadedUpdate::f32_scratch(std::int64_t numel) {
  const ScopedAllocationName name("checkpoint: parameters widened");
  return Tensor::empty(Shape{numel}, DType::kF32, device_.tracker(), MemoryCategory::kWorkspace);
}

}  // namespace zt::zero
