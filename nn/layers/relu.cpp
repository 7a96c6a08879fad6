// ReLU forward/backward on the kernel backend, in f32 whatever the activations' dtype.
#include "nn/layers/relu.h"

namespace zt::nn {

// x (any shape) -> y (same shape and dtype)
Tensor Relu::forward(ParameterViews, const Tensor& input, ModuleContext& ctx) {
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.relu_forward(ctx.device, input, output);
  ctx.saved.push(input);
  return output;
}

// dy (same shape as x) -> dx = relu'(x) * dy
Tensor Relu::backward(ParameterViews, ParameterViews, const Tensor& grad_output,
                      ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.relu_backward(ctx.device, input, grad_output, grad_input);
  return grad_input;
}

}  // namespace zt::nn
