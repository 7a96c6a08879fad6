// RmsNorm forward/backward on the kernel backend, in f32 whatever the activations' dtype.
// Forward saves the input and each row's rstd (f32, as LayerNorm keeps its statistics), so
// backward need not recompute them.
#include "nn/layers/rms_norm.h"

#include "core/error.h"
#include "nn/dtype_contract.h"

namespace zt::nn {

RmsNorm::RmsNorm(std::string name, std::int64_t channels, float eps)
    : name_(std::move(name)), channels_(channels), eps_(eps) {
  ZT_CHECK(channels_ > 0, name_ + ": RmsNorm needs at least one channel");
}

std::vector<ParameterSpec> RmsNorm::parameter_specs() const {
  return {{name_ + ".weight", Shape{channels_}, Init::ones()}};
}

// x (N, C) -> y (N, C) in x's dtype; saves x and rstd (N) f32.
Tensor RmsNorm::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.rank() >= 1 && input.dim(input.rank() - 1) == channels_,
           name_ + ": input " + input.shape().to_string() + " does not end in channels");
  check_parameters(params, input.dtype());
  const std::int64_t rows = input.numel() / channels_;
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  Tensor rstd =
      Tensor::empty(Shape{rows}, DType::kF32, ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.rms_norm_forward(ctx.device, input, params[0], eps_, output, rstd);
  ctx.saved.push(input);
  ctx.saved.push(rstd);
  return output;
}

// dy (N, C) -> dx (N, C) in x's dtype; dweight (C) accumulated in f32 over all rows.
Tensor RmsNorm::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                         ModuleContext& ctx) {
  const Tensor rstd = ctx.saved.pop();
  const Tensor input = ctx.saved.pop();
  check_parameters(params, input.dtype());
  ZT_CHECK(grads.size() == 1, name_ + " given the wrong number of gradients");
  expect_dtype(grad_output, input.dtype(), name_ + " grad_output");
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.rms_norm_backward(ctx.device, input, params[0], rstd, grad_output, grad_input,
                                grads[0]);
  return grad_input;
}

// The parameter comes in the compute dtype, which is the activations'.
void RmsNorm::check_parameters(ParameterViews params, DType compute) const {
  ZT_CHECK(params.size() == 1, name_ + " given the wrong number of parameters");
  expect_dtype(params[0], compute, name_ + " parameter");
}

}  // namespace zt::nn
