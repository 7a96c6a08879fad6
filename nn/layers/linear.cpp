// Linear forward and backward on GEMMs.
//   forward:  y (N, out) = x (N, in) · W^T (in, out) + b
//   backward: dx (N, in) = dy (N, out) · W (out, in)
//             dW (out, in) += dy^T (out, N) · x (N, in);  db (out) += Σ_n dy[n, :]
// N is every leading dimension of x flattened, so (B, T, C) inputs work unchanged.
#include "nn/layers/linear.h"

#include <cmath>

#include "core/error.h"
#include "nn/kernels/cpu/gemm_cpu.h"

namespace zt::nn {

Linear::Linear(std::string name, std::int64_t in_features, std::int64_t out_features, bool bias,
               std::optional<Init> weight_init)
    : name_(std::move(name)),
      in_features_(in_features),
      out_features_(out_features),
      bias_(bias),
      weight_init_(weight_init) {}

std::vector<ParameterSpec> Linear::parameter_specs() const {
  // Kaiming-uniform-like bound 1/sqrt(in), as PyTorch's default Linear initialization.
  const float bound = 1.0f / std::sqrt(static_cast<float>(in_features_));
  std::vector<ParameterSpec> specs{{name_ + ".weight", Shape{out_features_, in_features_},
                                    weight_init_.value_or(Init::uniform(bound))}};
  if (bias_) {
    specs.push_back({name_ + ".bias", Shape{out_features_},
                     weight_init_ ? Init::zeros() : Init::uniform(bound)});
  }
  return specs;
}

Tensor Linear::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.numel() % in_features_ == 0, name_ + ": input does not end in in_features");
  const std::int64_t rows = input.numel() / in_features_;
  const Tensor& weight = params[0];
  Tensor output = Tensor::zeros(input.shape().with_extent(input.rank() - 1, out_features_),
                                DType::kF32, ctx.tracker, MemoryCategory::kActivations);
  float* y = output.data_as<float>();
  if (bias_) {
    const float* b = params[1].data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      for (std::int64_t o = 0; o < out_features_; ++o) y[n * out_features_ + o] = b[o];
    }
  }
  cpu::gemm_f32(false, true, rows, out_features_, in_features_, 1.0f, input.data_as<float>(),
                in_features_, weight.data_as<float>(), in_features_, bias_ ? 1.0f : 0.0f, y,
                out_features_);
  ctx.saved.push(input);
  return output;
}

Tensor Linear::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                        ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  const std::int64_t rows = input.numel() / in_features_;
  const float* dy = grad_output.data_as<float>();
  Tensor grad_input = Tensor::zeros(input.shape(), DType::kF32, ctx.tracker,
                                    MemoryCategory::kActivations);
  cpu::gemm_f32(false, false, rows, in_features_, out_features_, 1.0f, dy, out_features_,
                params[0].data_as<float>(), in_features_, 0.0f, grad_input.data_as<float>(),
                in_features_);
  cpu::gemm_f32(true, false, out_features_, in_features_, rows, 1.0f, dy, out_features_,
                input.data_as<float>(), in_features_, 1.0f, grads[0].data_as<float>(),
                in_features_);
  if (bias_) {
    float* db = grads[1].data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      for (std::int64_t o = 0; o < out_features_; ++o) db[o] += dy[n * out_features_ + o];
    }
  }
  return grad_input;
}

}  // namespace zt::nn
