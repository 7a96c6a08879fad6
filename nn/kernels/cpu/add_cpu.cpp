// Element-wise f32 addition compiled for each vector instruction set (Note [One loop, three
// instruction sets] in gelu_cpu.cpp); a single addition per element has no order to keep.
#include "nn/kernels/cpu/add_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/error.h"

namespace zt::nn::cpu {
namespace {

// Sums go through a block on the stack, which aliases neither input, so the compiler
// vectorizes without a run-time overlap check (that fails, and runs the scalar loop, exactly
// when out is a or b, as in `dw += partial`).
constexpr std::int64_t kBlockElements = 64;

[[gnu::always_inline]] inline void add_loop(const float* a, const float* b, float* out,
                                            std::int64_t n) {
  const std::int64_t whole = n - n % kBlockElements;
  for (std::int64_t start = 0; start < whole; start += kBlockElements) {
    float sum[kBlockElements];
    for (std::int64_t i = 0; i < kBlockElements; ++i) sum[i] = a[start + i] + b[start + i];
    std::memcpy(out + start, sum, sizeof sum);
  }
  for (std::int64_t i = whole; i < n; ++i) out[i] = a[i] + b[i];
}

void add_baseline(const float* a, const float* b, float* out, std::int64_t n) {
  add_loop(a, b, out, n);
}

#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void add_avx2(const float* a, const float* b, float* out,
                                          std::int64_t n) {
  add_loop(a, b, out, n);
}
[[gnu::target("avx512f,fma")]] void add_avx512(const float* a, const float* b, float* out,
                                               std::int64_t n) {
  add_loop(a, b, out, n);
}
#endif

}  // namespace

void add_f32(const float* a, const float* b, float* out, std::int64_t n, VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "add asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return add_avx512(a, b, out, n);
    case VectorIsa::kAvx2:
      return add_avx2(a, b, out, n);
#endif
    default:
      return add_baseline(a, b, out, n);
  }
}

}  // namespace zt::nn::cpu
