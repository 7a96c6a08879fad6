// The CPU kernel backend: the loops the layers used to run themselves, unchanged in order
// and in GEMM calls, so results are bitwise what they were. bf16 operands go straight into
// oneDNN's bf16 GEMM (f32 accumulation) where the CPU has one; otherwise bf16/f16 operands
// are widened to f32 scratch for sgemm. Results are computed in f32 and rounded once.
#include "nn/kernels/cpu/cpu_kernel_backend.h"

#include <string>

#include "core/error.h"
#include "nn/kernels/cpu/attention_cpu.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/math/activation_math.h"
#include "nn/kernels/math/cross_entropy_math.h"
#include "nn/kernels/math/embedding_math.h"
#include "nn/kernels/math/gelu_math.h"
#include "nn/kernels/math/layer_norm_math.h"
#include "nn/kernels/token_ids.h"

namespace zt::nn::cpu {
namespace {

// c (m, n) = alpha op(a) (m, k) · op(b) (k, n) + beta · c, a and b in the compute dtype, c f32.
void gemm_compute(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, const Tensor& a, std::int64_t lda, const Tensor& b,
                  std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                  MemoryTracker& tracker) {
  if (a.dtype() == DType::kBF16 && b.dtype() == DType::kBF16 && bf16_gemm_available()) {
    if (a.device().meta) return;
    gemm_bf16(transpose_a, transpose_b, m, n, k, alpha, a.data_as<BF16>(), lda, b.data_as<BF16>(),
              ldb, beta, c, ldc);
    return;
  }
  const Tensor a32 = to_f32_scratch(a, tracker);
  const Tensor b32 = to_f32_scratch(b, tracker);
  if (a.device().meta) return;  // the operands' workspace counted, no arithmetic
  gemm_f32(transpose_a, transpose_b, m, n, k, alpha, a32.data_as<float>(), lda,
           b32.data_as<float>(), ldb, beta, c, ldc);
}

// Note [Dry kernels]
// On a meta device (Note [Meta devices]) every op makes the workspace allocations it makes on
// the CPU, in the same order and lifetimes, and skips the arithmetic: the estimator's tracker
// then sees this backend's workspace exactly. `dry` marks the point after the last allocation
// that precedes arithmetic; loads and stores of meta tensors are no-ops (dtype_io.cpp).
bool dry(const DeviceContext& device) { return device.device().meta; }

MemoryTracker& tracker_of(DeviceContext& device) {
  ZT_CHECK(device.device().kind == DeviceKind::kCpu || dry(device),
           "the CPU kernel backend was given the context of " + device.device().to_string());
  return device.tracker();
}

class CpuKernelBackend final : public KernelBackend {
 public:
  const Device& device() const override { return device_; }

  void gemm(DeviceContext& device, bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
            const Tensor& b, float beta, const Tensor& c) const override {
    MemoryTracker& tracker = tracker_of(device);
    ZT_CHECK(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, "gemm over non-matrices");
    expect_dtype(b, a.dtype(), "gemm b");
    const std::int64_t m = transpose_a ? a.dim(1) : a.dim(0);
    const std::int64_t k = transpose_a ? a.dim(0) : a.dim(1);
    const std::int64_t n = transpose_b ? b.dim(0) : b.dim(1);
    ZT_CHECK((transpose_b ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
             "gemm shapes do not match");
    // beta != 0 reads c: a non-f32 c is widened first, then rounded back once.
    const F32Output out(c, tracker);
    if (c.dtype() != DType::kF32 && beta != 0.0f) load_f32(c, 0, c.numel(), out.data());
    gemm_compute(transpose_a, transpose_b, m, n, k, alpha, a, a.dim(1), b, b.dim(1), beta,
                 out.data(), n, tracker);
    out.store();
  }

  void linear_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                      const Tensor& bias, const Tensor& y) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    const F32Output y32(y, tracker);
    float* ys = y32.data();
    if (bias.defined() && !dry(device)) {
      const Tensor bias32 = to_f32_scratch(bias, tracker);
      const float* b = bias32.data_as<float>();
      for (std::int64_t n = 0; n < rows; ++n) {
        for (std::int64_t o = 0; o < out_features; ++o) ys[n * out_features + o] = b[o];
      }
    }
    gemm_compute(false, true, rows, out_features, in_features, 1.0f, x, in_features, weight,
                 in_features, bias.defined() ? 1.0f : 0.0f, ys, out_features, tracker);
    y32.store();
  }

  void linear_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                       const Tensor& dy, const Tensor& dx, const Tensor& dweight,
                       const Tensor& dbias) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t out_features = weight.dim(0);
    const std::int64_t in_features = weight.dim(1);
    const std::int64_t rows = x.numel() / in_features;
    {
      const F32Output dx32(dx, tracker);
      gemm_compute(false, false, rows, in_features, out_features, 1.0f, dy, out_features, weight,
                   in_features, 0.0f, dx32.data(), in_features, tracker);
      dx32.store();
    }
    gemm_compute(true, false, out_features, in_features, rows, 1.0f, dy, out_features, x,
                 in_features, 1.0f, dweight.data_as<float>(), in_features, tracker);
    if (dbias.defined()) {
      const F32Rows dy_rows(dy, out_features, tracker);
      if (dry(device)) return;
      float* db = dbias.data_as<float>();
      for (std::int64_t n = 0; n < rows; ++n) {
        const float* dy_row = dy_rows.load(n);
        for (std::int64_t o = 0; o < out_features; ++o) db[o] += dy_row[o];
      }
    }
  }

  void gelu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    map_elements(x, y, [](float v) { return math::gelu_forward(v); });
  }
  void gelu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    zip_elements(x, dy, dx, [](float v, float d) { return math::gelu_backward(v, d); });
  }
  void relu_forward(DeviceContext& device, const Tensor& x, const Tensor& y) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    map_elements(x, y, [](float v) { return math::relu_forward(v); });
  }
  void relu_backward(DeviceContext& device, const Tensor& x, const Tensor& dy,
                     const Tensor& dx) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    zip_elements(x, dy, dx, [](float v, float d) { return math::relu_backward(v, d); });
  }

  void add(DeviceContext& device, const Tensor& a, const Tensor& b,
           const Tensor& out) const override {
    (void)tracker_of(device);
    if (dry(device)) return;
    zip_elements(a, b, out, [](float u, float v) { return u + v; });
  }

  void layer_norm_forward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                          const Tensor& bias, float eps, const Tensor& y, const Tensor& mean,
                          const Tensor& rstd) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t channels = weight.numel();
    const std::int64_t rows = x.numel() / channels;
    const Tensor weight32 = to_f32_scratch(weight, tracker);
    const Tensor bias32 = to_f32_scratch(bias, tracker);
    const F32Rows x_rows(x, channels, tracker);
    const F32Rows y_rows(y, channels, tracker);
    if (dry(device)) return;
    const float* w = weight32.data_as<float>();
    const float* b = bias32.data_as<float>();
    float* m = mean.data_as<float>();
    float* r = rstd.data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      math::layer_norm_forward_row(x_rows.load(n), w, b, channels, eps, y_rows.out(n), m + n,
                                   r + n);
      y_rows.store(n);
    }
  }

  void layer_norm_backward(DeviceContext& device, const Tensor& x, const Tensor& weight,
                           const Tensor& mean, const Tensor& rstd, const Tensor& dy,
                           const Tensor& dx, const Tensor& dweight,
                           const Tensor& dbias) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t channels = weight.numel();
    const std::int64_t rows = x.numel() / channels;
    const Tensor weight32 = to_f32_scratch(weight, tracker);
    const F32Rows x_rows(x, channels, tracker);
    const F32Rows dy_rows(dy, channels, tracker);
    const F32Rows dx_rows(dx, channels, tracker);
    if (dry(device)) return;
    const float* w = weight32.data_as<float>();
    const float* m = mean.data_as<float>();
    const float* r = rstd.data_as<float>();
    float* dw = dweight.data_as<float>();
    float* db = dbias.data_as<float>();
    for (std::int64_t n = 0; n < rows; ++n) {
      math::layer_norm_backward_row(dy_rows.load(n), x_rows.load(n), w, m[n], r[n], channels,
                                    dx_rows.out(n), dw, db);
      dx_rows.store(n);
    }
  }

  void attention_forward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                         const AttentionHeads& v, const AttentionHeads& o,
                         const Tensor& lse) const override {
    cpu::attention_forward(q, k, v, o, lse, tracker_of(device));
  }
  void attention_backward(DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
                          const AttentionHeads& v, const AttentionHeads& o, const Tensor& lse,
                          const AttentionHeads& d_o, const AttentionHeads& dq,
                          const AttentionHeads& dk, const AttentionHeads& dv) const override {
    cpu::attention_backward(q, k, v, o, lse, d_o, dq, dk, dv, tracker_of(device));
  }

  void embedding_forward(DeviceContext& device, const Tensor& ids, const Tensor& wte,
                         const Tensor& wpe, const Tensor& out) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = wte.dim(1);
    const std::int32_t* id = ids.data_as<std::int32_t>();
    if (!dry(device)) check_token_ids(id, ids.numel(), seq_len, wte.dim(0));
    const F32Rows wte_rows(wte, channels, tracker);
    const F32Rows wpe_rows(wpe, channels, tracker);
    const F32Rows out_rows(out, channels, tracker);
    if (dry(device)) return;
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      math::embedding_forward_row(wte_rows.load(id[i]), wpe_rows.load(i % seq_len), channels,
                                  out_rows.out(i));
      out_rows.store(i);
    }
  }

  void embedding_backward(DeviceContext& device, const Tensor& ids, const Tensor& dout,
                          const Tensor& dwte, const Tensor& dwpe) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t seq_len = ids.dim(1);
    const std::int64_t channels = dwte.dim(1);
    const std::int32_t* id = ids.data_as<std::int32_t>();
    const F32Rows dout_rows(dout, channels, tracker);
    if (dry(device)) return;
    float* dwte_data = dwte.data_as<float>();
    float* dwpe_data = dwpe.data_as<float>();
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      math::embedding_backward_row(dout_rows.load(i), channels, dwte_data + id[i] * channels,
                                   dwpe_data + (i % seq_len) * channels);
    }
  }

  double softmax_cross_entropy(DeviceContext& device, const Tensor& logits, const Tensor& targets,
                               float grad_scale, const Tensor& dlogits) const override {
    MemoryTracker& tracker = tracker_of(device);
    const std::int64_t classes = logits.dim(logits.rank() - 1);
    const std::int64_t rows = logits.numel() / classes;
    const F32Rows z(logits, classes, tracker);
    const F32Rows dz(dlogits, classes, tracker);
    if (dry(device)) return 0.0;
    const std::int32_t* t = targets.data_as<std::int32_t>();
    double loss_sum = 0.0;
    for (std::int64_t n = 0; n < rows; ++n) {
      ZT_CHECK(t[n] >= 0 && t[n] < classes, "cross-entropy target " + std::to_string(t[n]) +
                                                " outside [0, " + std::to_string(classes) + ")");
      loss_sum += math::softmax_cross_entropy_row(z.load(n), classes, t[n], grad_scale, dz.out(n));
      dz.store(n);
    }
    return loss_sum;
  }

 private:
  Device device_ = Device::cpu();
};

}  // namespace

const KernelBackend& cpu_kernel_backend() {
  static const CpuKernelBackend backend;
  return backend;
}

}  // namespace zt::nn::cpu
