// GELU forward/backward: loops over the per-element math shared with the CUDA kernels, in
// f32 whatever the activations' dtype (cpu/dtype_io.h widens and rounds). Forward saves the
// input; backward evaluates the exact derivative there.
#include "nn/layers/gelu.h"

#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/gelu_math.h"

namespace zt::nn {

// x (any shape) -> y (same shape and dtype)
Tensor Gelu::forward(ParameterViews, const Tensor& input, ModuleContext& ctx) {
  Tensor output =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  cpu::map_elements(input, output, [](float x) { return math::gelu_forward(x); });
  ctx.saved.push(input);
  return output;
}

// dy (same shape as x) -> dx = gelu'(x) * dy
Tensor Gelu::backward(ParameterViews, ParameterViews, const Tensor& grad_output,
                      ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  Tensor grad_input =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  cpu::zip_elements(input, grad_output, grad_input,
                    [](float x, float dy) { return math::gelu_backward(x, dy); });
  return grad_input;
}

}  // namespace zt::nn
