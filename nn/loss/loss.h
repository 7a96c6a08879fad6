// Loss: what the engine minimizes, given the last block's output and the batch's targets.
// Built in: softmax cross-entropy (classifiers, language models) and mean squared error;
// library users may write their own.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "core/device/device_context.h"
#include "core/tensor.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/loss/softmax_cross_entropy.h"

namespace zt::nn {

// Where a loss runs: the device holding output and targets (its tracker counts what the loss
// allocates, as activations) and that device's kernels.
struct LossContext {
  DeviceContext& device;
  const KernelBackend& kernels;

  MemoryTracker& tracker() const { return device.tracker(); }
};

// The engine minimizes the mean of the per-element loss over every target element of the
// global batch (a token, a label, a regression value). For one micro-batch, compute returns
// the sum of the per-element losses (loss_sum), the number of target elements (rows, which
// must be targets.numel()), and dL/d(output) of that sum times grad_scale, in output's shape
// and dtype. grad_scale is 1 / (target elements in the global batch), times the loss scale
// in fp16, so summing every rank's gradients gives the gradient of the global mean.
class Loss {
 public:
  virtual ~Loss() = default;
  virtual std::string_view name() const = 0;
  virtual LossResult compute(const Tensor& output, const Tensor& targets, float grad_scale,
                             LossContext& ctx) const = 0;
};

// output (N, C) or (B, T, C) logits; targets (N) or (B, T) i32 class indices in [0, classes).
// The softmax spans the first `classes` columns of the output, 0 meaning all C: a language
// model's vocabulary padded past the data's (Note [Padded vocabulary] in
// nn/kernels/math/cross_entropy_math.h).
std::unique_ptr<Loss> make_softmax_cross_entropy_loss(std::int64_t classes = 0);
// output and targets with the same element count; targets f32, output any floating dtype.
// Per element (output - target)², as PyTorch's MSELoss with reduction "mean".
std::unique_ptr<Loss> make_mean_squared_error_loss();

}  // namespace zt::nn
