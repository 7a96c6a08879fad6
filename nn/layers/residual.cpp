// Residual forward/backward. The sum needs nothing saved: only the child pushes activations.
// Sums go to new tensors, never into the child's output, which the child may have saved.
// Each sum is computed in f32 and rounded once into the activations' dtype.
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
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.add(ctx.device, input, branch, output);
  return output;
}

Tensor Residual::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                          ModuleContext& ctx) {
  const Tensor branch_grad = child_->backward(params, grads, grad_output, ctx);
  Tensor grad_input = Tensor::empty(grad_output.shape(), grad_output.dtype(), ctx.tracker(),
                                    MemoryCategory::kActivations);
  ctx.kernels.add(ctx.device, grad_output, branch_grad, grad_input);
  return grad_input;
}

}  // namespace zt::nn
