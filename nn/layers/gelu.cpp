// GELU forward/backward on the kernel backend, in f32 whatever the activations' dtype.
// Forward saves the input; backward evaluates the exact derivative there.
#include "nn/layers/gelu.h"

namespace zt::nn {

// x (any shape) -> y (same shape and dtype)
Tensor Gelu::forward(ParameterViews, const Tensor& input, ModuleContext& ctx) {
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.gelu_forward(ctx.device, input, output);
  ctx.saved.push(input);
  return output;
}

// dy (same shape as x) -> dx = gelu'(x) * dy
Tensor Gelu::backward(ParameterViews, ParameterViews, const Tensor& grad_output,
                      ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.gelu_backward(ctx.device, input, grad_output, grad_input);
  return grad_input;
}

}  // namespace zt::nn
