// Forward and backward over blocks, with recomputation for checkpointed blocks.
#include "runtime/engine/block_pass.h"

#include <string>

#include "core/error.h"

namespace zt::engine {

BlockPass::BlockPass(nn::Model& model, zero::ZeroStrategy& strategy, DeviceContext& device,
                     const nn::KernelBackend& kernels,
                     const ActivationCheckpointingConfig& checkpointing)
    : model_(model),
      strategy_(strategy),
      device_(device),
      tracker_(device.tracker()),
      kernels_(kernels),
      checkpointing_(checkpointing),
      saved_(model.num_blocks()),
      checkpoint_inputs_(model.num_blocks()) {}

bool BlockPass::checkpointed(std::size_t block) const {
  return checkpointing_.enabled &&
         block % static_cast<std::size_t>(checkpointing_.every_n_blocks) == 0;
}

Tensor BlockPass::run_forward(std::size_t block, const Tensor& input,
                              const nn::DropoutDraw* dropout) {
  nn::ModuleContext ctx{device_, kernels_, saved_[block], nullptr, dropout};
  return model_.block(block).module->forward(strategy_.parameters(block), input, ctx);
}

Tensor BlockPass::forward(const Tensor& input, const nn::DropoutDraw* dropout) {
  dropout_ = dropout != nullptr ? std::optional<nn::DropoutDraw>(*dropout) : std::nullopt;
  const nn::DropoutDraw* draw = dropout_ ? &*dropout_ : nullptr;
  Tensor x = input;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    tracker_.set_phase("forward block " + std::to_string(b));
    strategy_.before_forward(b);
    Tensor y = run_forward(b, x, draw);
    strategy_.after_forward(b);
    if (checkpointed(b)) {
      // Keep the input only; what forward saved is recomputed before backward.
      saved_[b].clear();
      checkpoint_inputs_[b] = x;
    }
    x = std::move(y);
  }
  return x;
}

// Note [Evaluation memory]
// An evaluation micro-batch holds at once: its input, one block's saved tensors and output,
// and the gathered parameters forward would hold at that block. Training's forward of the
// same micro-batch holds all of that plus every earlier block's saved tensors (or input,
// when checkpointed), so evaluation never raises the peak above training's at the same
// micro_batch_size; the estimator replays it anyway (memory_estimator.cpp).
Tensor BlockPass::forward_only(const Tensor& input) {
  Tensor x = input;
  for (std::size_t b = 0; b < model_.num_blocks(); ++b) {
    tracker_.set_phase("evaluation block " + std::to_string(b));
    strategy_.before_forward(b);
    Tensor y = run_forward(b, x, nullptr);  // evaluation: no dropout
    saved_[b].clear();
    strategy_.after_forward(b);
    x = std::move(y);
  }
  return x;
}

void BlockPass::discard_forward() {
  for (nn::SavedActivations& saved : saved_) saved.clear();
  for (Tensor& input : checkpoint_inputs_) input = Tensor();
}

void BlockPass::backward(Tensor grad_output, bool last_micro_batch) {
  const nn::DropoutDraw* draw = dropout_ ? &*dropout_ : nullptr;
  Tensor dy = std::move(grad_output);
  for (std::size_t b = model_.num_blocks(); b-- > 0;) {
    strategy_.before_backward(b);
    if (checkpointed(b)) {
      tracker_.set_phase("recompute block " + std::to_string(b));
      // The same kernels on the same inputs: the recomputed activations, and so the
      // gradients, are bit-identical to a run without checkpointing; dropout draws forward's
      // masks again from the same draw.
      (void)run_forward(b, checkpoint_inputs_[b], draw);
      checkpoint_inputs_[b] = Tensor();
    }
    tracker_.set_phase("backward block " + std::to_string(b));
    nn::ModuleContext ctx{device_, kernels_, saved_[b], nullptr, draw};
    dy = model_.block(b).module->backward(strategy_.parameters(b), strategy_.gradients(b), dy, ctx);
    ZT_CHECK(saved_[b].empty(), model_.block(b).name + " left saved activations behind");
    strategy_.after_backward(b, last_micro_batch);
  }
}

}  // namespace zt::engine
