// BlockPass: one micro-batch through the model's blocks, forward then backward, around the
// ZeRO strategy's hooks, with per-block activation checkpointing: a checkpointed block
// keeps only its input in forward and is recomputed just before its backward.
#pragma once

#include <optional>
#include <vector>

#include "core/config/config.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/model.h"
#include "sharding/zero_strategy.h"

namespace zt::engine {

class BlockPass {
 public:
  // `kernels` is the device's backend (nn::kernel_backend_for, with the run's attention).
  BlockPass(nn::Model& model, zero::ZeroStrategy& strategy, DeviceContext& device,
            const nn::KernelBackend& kernels, const ActivationCheckpointingConfig& checkpointing);

  // The last block's output for `input`. `dropout` draws the micro-batch's dropout masks
  // (null: none); backward, and a checkpointed block's recompute, draw the same ones.
  Tensor forward(const Tensor& input, const nn::DropoutDraw* dropout = nullptr);
  // Backward from dL/d(last output); every block's saved tensors are freed on return.
  void backward(Tensor grad_output, bool last_micro_batch);

  // The last block's output for `input` with nothing kept for a backward (evaluation): each
  // block's saved tensors are freed as soon as it is done, so activation memory stays below
  // forward's (Note [Evaluation memory]). Parameters are gathered per block as in forward;
  // the caller ends it with the strategy's end_forward_only once the loss is computed.
  Tensor forward_only(const Tensor& input);
  // Drops what forward kept for a backward that will not come (a failed step).
  void discard_forward();

  bool checkpointed(std::size_t block) const;

 private:
  Tensor run_forward(std::size_t block, const Tensor& input, const nn::DropoutDraw* dropout);

  nn::Model& model_;
  zero::ZeroStrategy& strategy_;
  DeviceContext& device_;
  MemoryTracker& tracker_;            // device_'s
  const nn::KernelBackend& kernels_;  // device_'s
  const ActivationCheckpointingConfig checkpointing_;
  std::vector<nn::SavedActivations> saved_;  // per block
  std::vector<Tensor> checkpoint_inputs_;    // per block; set for checkpointed blocks only
  std::optional<nn::DropoutDraw> dropout_;   // forward's, for its backward
};

}  // namespace zt::engine
