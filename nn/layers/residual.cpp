// Residual forward/backward. The sum needs nothing saved: only the child pushes activations.
// Sums go to new tensors, never into the child's output, which the child may have saved.
//   forward:  y = x + m(x)
//   backward: dx = dy + m.backward(dy)
#include "nn/layers/residual.h"

#include "core/error.h"

namespace zt::nn {

Residual::Residual(std::unique_ptr<Module> child) : child_(std::move(child)) {
  ZT_CHECK(child_ != nullptr, "Residual around no module");
}

std::vector<ParameterSpec> Residual::parameter_specs() const { return child_->parameter_specs(); }

// x (..., C) -> y (..., C); the child must keep the shape.
Tensor Residual::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  const Tensor branch = child_->forward(params, input, ctx);
  ZT_CHECK(branch.shape() == input.shape(), "Residual child changed the shape " +
                                                input.shape().to_string() + " to " +
                                                branch.shape().to_string());
  Tensor output =
      Tensor::zeros(input.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* x = input.data_as<float>();
  const float* m = branch.data_as<float>();
  float* y = output.data_as<float>();
  for (std::int64_t i = 0; i < input.numel(); ++i) y[i] = x[i] + m[i];
  return output;
}

Tensor Residual::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                          ModuleContext& ctx) {
  const Tensor branch_grad = child_->backward(params, grads, grad_output, ctx);
  Tensor grad_input =
      Tensor::zeros(grad_output.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* dy = grad_output.data_as<float>();
  const float* dm = branch_grad.data_as<float>();
  float* dx = grad_input.data_as<float>();
  for (std::int64_t i = 0; i < grad_output.numel(); ++i) dx[i] = dy[i] + dm[i];
  return grad_input;
}

}  // namespace zt::nn
