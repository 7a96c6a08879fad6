// Linear forward and backward on GEMMs.
//   forward:  y (N, out) = x (N, in) · W^T (in, out) + b
//   backward: dx (N, in) = dy (N, out) · W (out, in)
//             dW (out, in) += dy^T (out, N) · x (N, in);  db (out) += Σ_n dy[n, :]
// N is every leading dimension of x flattened, so (B, T, C) inputs work unchanged.
// bf16 operands go straight into a bf16 GEMM (f32 accumulation) where the CPU has one;
// otherwise bf16/f16 operands are widened to f32 scratch for sgemm. Either way results are
// computed in f32 and rounded once into the activations' dtype.
#include "nn/layers/linear.h"

#include <cmath>

#include "core/error.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gemm_cpu.h"

namespace zt::nn {
namespace {

// c (m, n) = op(a) (m, k) · op(b) (k, n) + beta · c, a and b in the compute dtype, c f32.
void gemm_compute(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, const Tensor& a, std::int64_t lda, const Tensor& b,
                  std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                  MemoryTracker& tracker) {
  if (a.dtype() == DType::kBF16 && b.dtype() == DType::kBF16 && cpu::bf16_gemm_available()) {
    cpu::gemm_bf16(transpose_a, transpose_b, m, n, k, 1.0f, a.data_as<BF16>(), lda,
                   b.data_as<BF16>(), ldb, beta, c, ldc);
    return;
  }
  const Tensor a32 = cpu::to_f32_scratch(a, tracker);
  const Tensor b32 = cpu::to_f32_scratch(b, tracker);
  cpu::gemm_f32(transpose_a, transpose_b, m, n, k, 1.0f, a32.data_as<float>(), lda,
                b32.data_as<float>(), ldb, beta, c, ldc);
}

}  // namespace

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

// x (N, in) -> y (N, out), in x's dtype; saves x.
Tensor Linear::forward(ParameterViews params, const Tensor& input, ModuleContext& ctx) {
  ZT_CHECK(input.numel() % in_features_ == 0, name_ + ": input does not end in in_features");
  const std::int64_t rows = input.numel() / in_features_;
  check_parameters(params, input.dtype());
  Tensor output = Tensor::zeros(input.shape().with_extent(input.rank() - 1, out_features_),
                                input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  const cpu::F32Output y(output, ctx.tracker);
  float* ys = y.data();
  if (bias_) {
    const Tensor bias = cpu::to_f32_scratch(params[1], ctx.tracker);
    const float* b = bias.data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      for (std::int64_t o = 0; o < out_features_; ++o) ys[n * out_features_ + o] = b[o];
    }
  }
  gemm_compute(false, true, rows, out_features_, in_features_, input, in_features_, params[0],
               in_features_, bias_ ? 1.0f : 0.0f, ys, out_features_, ctx.tracker);
  y.store();
  ctx.saved.push(input);
  return output;
}

// dy (N, out) -> dx (N, in) in the activations' dtype; dW and db accumulate into the f32
// gradient views directly (beta = 1), so accumulation across calls stays in f32.
Tensor Linear::backward(ParameterViews params, ParameterViews grads, const Tensor& grad_output,
                        ModuleContext& ctx) {
  const Tensor input = ctx.saved.pop();
  const std::int64_t rows = input.numel() / in_features_;
  check_parameters(params, input.dtype());
  cpu::expect_dtype(grad_output, input.dtype(), name_ + " grad_output");
  Tensor grad_input =
      Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  {
    const cpu::F32Output dx(grad_input, ctx.tracker);
    gemm_compute(false, false, rows, in_features_, out_features_, grad_output, out_features_,
                 params[0], in_features_, 0.0f, dx.data(), in_features_, ctx.tracker);
    dx.store();
  }
  gemm_compute(true, false, out_features_, in_features_, rows, grad_output, out_features_, input,
               in_features_, 1.0f, grads[0].data_as<float>(), in_features_, ctx.tracker);
  if (bias_) {
    const cpu::F32Rows dy(grad_output, out_features_, ctx.tracker);
    float* db = grads[1].data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      const float* dy_row = dy.load(n);
      for (std::int64_t o = 0; o < out_features_; ++o) db[o] += dy_row[o];
    }
  }
  return grad_input;
}

// Parameters come in the compute dtype, which is the activations'.
void Linear::check_parameters(ParameterViews params, DType compute) const {
  ZT_CHECK(params.size() == (bias_ ? 2u : 1u), name_ + " given the wrong number of parameters");
  for (const Tensor& p : params) cpu::expect_dtype(p, compute, name_ + " parameter");
}

}  // namespace zt::nn
