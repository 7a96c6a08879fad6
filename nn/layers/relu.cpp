// ReLU forward/backward: loops over the per-element math shared with the CUDA kernels, in
// f32 whatever the activations' dtype (cpu/dtype_io.h widens and rounds).
#include "nn/layers/relu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/activation_math.h"

namespace zt::nn {

// x (any shape) -> y (same shape and dtype)
Tensor Relu::forward(ParameterViews, const Tensor& input, ModuleContext& ctx) {
  Tensor output =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  cpu::map_elements(input, output, [](float x) { return math::relu_forward(x); });
  ctx.saved.push(input);
  return output;
}

// dy (same shape as x) -> dx = relu'(x) * dy
Tensor Relu::backward(ParameterViews, ParameterViews, const Tensor& grad_output,
                      ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  Tensor grad_input =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  cpu::zip_elements(input, grad_output, grad_input,
                    [](float x, float dy) { return math::relu_backward(x, dy); });
  return grad_input;
}

}  // namespace zt::nn
