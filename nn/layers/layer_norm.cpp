// LayerNorm forward/backward: loops over rows calling the per-row math shared with CUDA,
// in f32 whatever the activations' dtype (bf16/f16 rows are widened one at a time).
// Forward saves the input and each row's mean and rstd, so backward need not recompute them.
#include "nn/layers/layer_norm.h"

#include "core/error.h"
#include "nn/kernels/cpu/dtype_io.h"
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
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  Tensor mean = Tensor::zeros(Shape{rows}, DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  Tensor rstd = Tensor::zeros(Shape{rows}, DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  const Tensor weight = cpu::to_f32_scratch(params[0], ctx.tracker);
  const Tensor bias = cpu::to_f32_scratch(params[1], ctx.tracker);
  const cpu::F32Rows x(input, channels_, ctx.tracker);
  const cpu::F32Rows y(output, channels_, ctx.tracker);
  const float* w = weight.data_as<float>();
  const float* b = bias.data_as<float>();
  float* m = mean.data_as<float>();
  float* r = rstd.data_as<float>();
  for (std::int64_t n = 0; n < rows; ++n) {
    math::layer_norm_forward_row(x.load(n), w, b, channels_, eps_, y.out(n), m + n, r + n);
    y.store(n);
  }
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
  cpu::expect_dtype(grad_output, input.dtype(), name_ + " grad_output");
  const std::int64_t rows = input.numel() / channels_;
  Tensor grad_input =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  const Tensor weight = cpu::to_f32_scratch(params[0], ctx.tracker);
  const cpu::F32Rows x(input, channels_, ctx.tracker);
  const cpu::F32Rows dy(grad_output, channels_, ctx.tracker);
  const cpu::F32Rows dx(grad_input, channels_, ctx.tracker);
  const float* w = weight.data_as<float>();
  const float* m = mean.data_as<float>();
  const float* r = rstd.data_as<float>();
  float* dw = grads[0].data_as<float>();
  float* db = grads[1].data_as<float>();
  for (std::int64_t n = 0; n < rows; ++n) {
    math::layer_norm_backward_row(dy.load(n), x.load(n), w, m[n], r[n], channels_, dx.out(n), dw,
                                  db);
    dx.store(n);
  }
  return grad_input;
}

// Parameters come in the compute dtype, which is the activations'.
void LayerNorm::check_parameters(ParameterViews params, DType compute) const {
  ZT_CHECK(params.size() == 2, name_ + " given the wrong number of parameters");
  for (const Tensor& p : params) cpu::expect_dtype(p, compute, name_ + " parameter");
}

}  // namespace zt::nn
