// LayerNorm forward/backward on the kernel backend, in f32 whatever the activations' dtype.
// Forward saves the input and each row's mean and rstd, so backward need not recompute them.
#include "nn/layers/layer_norm.h"

#include "core/error.h"
#include "nn/dtype_contract.h"

namespace zt::nn {

LayerNorm::LayerNorm(std::string name, std::int64_t channels, float eps)
    : name_(std::move(name)), channels_(channels), eps_(eps) {
  ZT_CHECK(channels_ > 0, name_ + ": LayerNorm needs at least one channel");
}

std::vector<ParameterSpec> LayerNorm::parameter_specs() const {
  return {{name_ + ".weight", Shape{channels_}, Init::ones()},
          {name_ + ".bias", Shape{channels_}, Init::zeros()}};
}

// x (N, C) -> y (N, C) in x's dtype; saves x, mean (N), rstd (N). N is every leading axis
// flattened. mean and rstd stay f32 whatever the compute dtype (as PyTorch's LayerNorm keeps
// them in its accumulation type): they are N floats, and a rounded rstd would scale the
// whole row's gradient by its rounding error.
Tensor LayerNorm::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.rank() >= 1 && input.dim(input.rank() - 1) == channels_,
           name_ + ": input " + input.shape().to_string() + " does not end in channels");
  check_parameters(params, input.dtype());
  const std::int64_t rows = input.numel() / channels_;
  Tensor output =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  Tensor mean =
      Tensor::empty(Shape{rows}, DType::kF32, ctx.tracker(), MemoryCategory::kActivations);
  Tensor rstd =
      Tensor::empty(Shape{rows}, DType::kF32, ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.layer_norm_forward(ctx.device, input, params[0], params[1], eps_, output, mean, rstd);
  ctx.saved.push(input);
  ctx.saved.push(mean);
  ctx.saved.push(rstd);
  return output;
}

// dy (N, C) -> dx (N, C) in x's dtype; dweight, dbias (C) accumulated in f32 over all rows.
Tensor LayerNorm::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                           ModuleContext& ctx) {
  const Tensor rstd = ctx.saved.pop();
  const Tensor mean = ctx.saved.pop();
  const Tensor input = ctx.saved.pop();
  check_parameters(params, input.dtype());
  expect_dtype(grad_output, input.dtype(), name_ + " grad_output");
  Tensor grad_input =
      Tensor::empty(input.shape(), input.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  ctx.kernels.layer_norm_backward(ctx.device, input, params[0], mean, rstd, grad_output, grad_input,
                                  grads[0], grads[1]);
  return grad_input;
}

// Parameters come in the compute dtype, which is the activations'.
void LayerNorm::check_parameters(ParameterViews params, DType compute) const {
  ZT_CHECK(params.size() == 2, name_ + " given the wrong number of parameters");
  for (const Tensor& p : params) expect_dtype(p, compute, name_ + " parameter");
}

}  // namespace zt::nn
