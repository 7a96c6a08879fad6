// CPU GELU: the shared math in blocks that the compiler vectorizes once per instruction set,
// chosen at run time; bf16/f16 tensors are widened a block at a time and rounded once.
#include "nn/kernels/cpu/gelu_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/math/gelu_math.h"

namespace zt::nn::cpu {
namespace {

// Note [One loop, three instruction sets]
// The element loops are written once (the always-inline templates below, over the shared
// ZT_HOST_DEVICE math) and instantiated in functions compiled for AVX-512, for AVX2 with FMA
// and for the build's baseline (__attribute__((target))); the compiler vectorizes each for
// its registers, and supported_vector_isas() picks one at run time. Vectorizing never
// reorders the scalar operations (no -ffast-math), and nn/CMakeLists.txt compiles this file
// with -ffp-contract=off, so no ISA fuses a product into a sum that another does not (the
// math writes its fused multiply-adds as fmaf), and with -fno-trapping-math, without which
// GCC keeps a division or an exp behind a branch on AVX2 (tanh_f32's halves, GELU's clamp)
// instead of computing both sides and blending. So every path gives the same bits
// (tests/unit/nn/gelu_cpu_test.cpp). The baseline has no FMA instruction on x86-64: there
// each fmaf is a libm call, slow but exact, used only on CPUs older than AVX2.
// The loops run over blocks of kBlockElements copied to the stack: a fixed trip count that
// vectorizes without a scalar remainder (the last block is padded with zeros), and outputs
// that may alias inputs.
constexpr std::int64_t kBlockElements = 64;

[[gnu::always_inline]] inline void copy_block(const float* from, std::int64_t count,
                                              float (&block)[kBlockElements]) {
  std::memcpy(block, from, static_cast<std::size_t>(count) * sizeof(float));
  std::fill(block + count, block + kBlockElements, 0.0f);
}

[[gnu::always_inline]] inline void forward_blocks(const float* x, float* y, std::int64_t n) {
  for (std::int64_t start = 0; start < n; start += kBlockElements) {
    const std::int64_t count = std::min(kBlockElements, n - start);
    float in[kBlockElements];
    float out[kBlockElements];
    copy_block(x + start, count, in);
    for (std::int64_t i = 0; i < kBlockElements; ++i) out[i] = math::gelu_forward(in[i]);
    std::memcpy(y + start, out, static_cast<std::size_t>(count) * sizeof(float));
  }
}

[[gnu::always_inline]] inline void backward_blocks(const float* x, const float* dy, float* dx,
                                                   std::int64_t n) {
  for (std::int64_t start = 0; start < n; start += kBlockElements) {
    const std::int64_t count = std::min(kBlockElements, n - start);
    float in[kBlockElements];
    float d_out[kBlockElements];
    float d_in[kBlockElements];
    copy_block(x + start, count, in);
    copy_block(dy + start, count, d_out);
    for (std::int64_t i = 0; i < kBlockElements; ++i) {
      d_in[i] = math::gelu_backward(in[i], d_out[i]);
    }
    std::memcpy(dx + start, d_in, static_cast<std::size_t>(count) * sizeof(float));
  }
}

void forward_baseline(const float* x, float* y, std::int64_t n) { forward_blocks(x, y, n); }
void backward_baseline(const float* x, const float* dy, float* dx, std::int64_t n) {
  backward_blocks(x, dy, dx, n);
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void forward_avx2(const float* x, float* y, std::int64_t n) {
  forward_blocks(x, y, n);
}
[[gnu::target("avx2,fma")]] void backward_avx2(const float* x, const float* dy, float* dx,
                                               std::int64_t n) {
  backward_blocks(x, dy, dx, n);
}
[[gnu::target("avx512f,fma")]] void forward_avx512(const float* x, float* y, std::int64_t n) {
  forward_blocks(x, y, n);
}
[[gnu::target("avx512f,fma")]] void backward_avx512(const float* x, const float* dy, float* dx,
                                                    std::int64_t n) {
  backward_blocks(x, dy, dx, n);
}
#endif

void check_supported(VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "GELU asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
}

}  // namespace

void gelu_forward_f32(const float* x, float* y, std::int64_t n, VectorIsa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      check_supported(isa);
      return forward_avx512(x, y, n);
    case VectorIsa::kAvx2:
      check_supported(isa);
      return forward_avx2(x, y, n);
#endif
    default:
      check_supported(isa);
      return forward_baseline(x, y, n);
  }
}

void gelu_backward_f32(const float* x, const float* dy, float* dx, std::int64_t n, VectorIsa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      check_supported(isa);
      return backward_avx512(x, dy, dx, n);
    case VectorIsa::kAvx2:
      check_supported(isa);
      return backward_avx2(x, dy, dx, n);
#endif
    default:
      check_supported(isa);
      return backward_baseline(x, dy, dx, n);
  }
}

void gelu_forward(const Tensor& x, const Tensor& y) {
  expect_dtype(y, x.dtype(), "gelu_forward output");
  ZT_CHECK(y.numel() == x.numel(), "gelu_forward over tensors of different sizes");
  map_f32_blocks(x, y, [](const float* in, float* out, std::int64_t count) {
    gelu_forward_f32(in, out, count);
  });
}

void gelu_backward(const Tensor& x, const Tensor& dy, const Tensor& dx) {
  expect_dtype(dy, x.dtype(), "gelu_backward dy");
  expect_dtype(dx, x.dtype(), "gelu_backward dx");
  ZT_CHECK(dy.numel() == x.numel() && dx.numel() == x.numel(),
           "gelu_backward over tensors of different sizes");
  zip_f32_blocks(x, dy, dx,
                 [](const float* in, const float* d_out, float* d_in, std::int64_t count) {
                   gelu_backward_f32(in, d_out, d_in, count);
                 });
}

}  // namespace zt::nn::cpu
