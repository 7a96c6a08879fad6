// LayerNorm forward/backward: loops over rows calling the per-row math shared with CUDA.
// Forward saves the input and each row's mean and rstd, so backward need not recompute them.
#include "nn/layers/layer_norm.h"

#include "core/error.h"
#include "nn/kernels/math/layer_norm_math.h"

namespace zt::nn {

LayerNorm::LayerNorm(std::string name, std::int64_t channels, float eps)
    : name_(std::move(name)), channels_(channels), eps_(eps) {
  ZT_CHECK(channels_ > 0, name_ + ": LayerNorm needs at least one channel");
}

std::vector<ParameterSpec> LayerNorm::parameter_specs() const {
  return {{name_ + ".weight", Shape{channels_}, Init::ones()},
          {name_ + ".bias", Shape{channels_}, Init::zeros()}};
}

// x (N, C) -> y (N, C); saves x, mean (N), rstd (N). N is every leading axis flattened.
Tensor LayerNorm::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.rank() >= 1 && input.dim(input.rank() - 1) == channels_,
           name_ + ": input " + input.shape().to_string() + " does not end in channels");
  const std::int64_t rows = input.numel() / channels_;
  Tensor output =
      Tensor::zeros(input.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  Tensor mean = Tensor::zeros(Shape{rows}, DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  Tensor rstd = Tensor::zeros(Shape{rows}, DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* x = input.data_as<float>();
  const float* w = params[0].data_as<float>();
  const float* b = params[1].data_as<float>();
  float* y = output.data_as<float>();
  float* m = mean.data_as<float>();
  float* r = rstd.data_as<float>();
  for (std::int64_t n = 0; n < rows; ++n) {
    math::layer_norm_forward_row(x + n * channels_, w, b, channels_, eps_, y + n * channels_, m + n,
                                 r + n);
  }
  ctx.saved.push(input);
  ctx.saved.push(mean);
  ctx.saved.push(rstd);
  return output;
}

// dy (N, C) -> dx (N, C); dweight, dbias (C) accumulated over all rows.
Tensor LayerNorm::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                           ModuleContext& ctx) {
  const Tensor rstd = ctx.saved.pop();
  const Tensor mean = ctx.saved.pop();
  const Tensor input = ctx.saved.pop();
  const std::int64_t rows = input.numel() / channels_;
  Tensor grad_input =
      Tensor::zeros(input.shape(), DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const float* x = input.data_as<float>();
  const float* dy = grad_output.data_as<float>();
  const float* w = params[0].data_as<float>();
  const float* m = mean.data_as<float>();
  const float* r = rstd.data_as<float>();
  float* dx = grad_input.data_as<float>();
  float* dw = grads[0].data_as<float>();
  float* db = grads[1].data_as<float>();
  for (std::int64_t n = 0; n < rows; ++n) {
    math::layer_norm_backward_row(dy + n * channels_, x + n * channels_, w, m[n], r[n], channels_,
                                  dx + n * channels_, dw, db);
  }
  return grad_input;
}

}  // namespace zt::nn
