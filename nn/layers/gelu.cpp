// GELU forward/backward: loops over the per-element math shared with the CUDA kernels.
// Forward saves the input; backward evaluates the exact derivative there.
#include "nn/layers/gelu.h"

#include "nn/kernels/math/gelu_math.h"

namespace zt::nn {

// x (any shape) -> y (same shape)
Tensor Gelu::forward(ParameterViews, const Tensor& input, ModuleContext& ctx) {
  Tensor output =
      Tensor::zeros(input.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* x = input.data_as<float>();
  float* y = output.data_as<float>();
  for (std::int64_t i = 0; i < input.numel(); ++i) y[i] = math::gelu_forward(x[i]);
  ctx.saved.push(input);
  return output;
}

// dy (same shape as x) -> dx = gelu'(x) * dy
Tensor Gelu::backward(ParameterViews, ParameterViews, const Tensor& grad_output,
                      ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  Tensor grad_input =
      Tensor::zeros(input.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* x = input.data_as<float>();
  const float* dy = grad_output.data_as<float>();
  float* dx = grad_input.data_as<float>();
  for (std::int64_t i = 0; i < input.numel(); ++i) dx[i] = math::gelu_backward(x[i], dy[i]);
  return grad_input;
}

}  // namespace zt::nn
