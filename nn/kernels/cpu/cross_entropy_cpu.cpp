// The cross-entropy row once per vector instruction set, picked at run time (Note [One loop,
// three instruction sets] in gelu_cpu.cpp; its sums in lanes: Note [Sums in lanes]).
#include "nn/kernels/cpu/cross_entropy_cpu.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "nn/kernels/math/cross_entropy_math.h"

namespace zt::nn::cpu {
namespace {

// flatten: the row function and the math under it inlined, so each is compiled for the ISA.
[[gnu::flatten]] float row_baseline(const float* z, std::int64_t classes, std::int64_t columns,
                                    std::int32_t target, float grad_scale, float* dz) {
  return math::softmax_cross_entropy_row(z, classes, columns, target, grad_scale, dz);
}

#if defined(__x86_64__)
[[gnu::flatten, gnu::target("avx2,fma")]] float row_avx2(const float* z, std::int64_t classes,
                                                         std::int64_t columns, std::int32_t target,
                                                         float grad_scale, float* dz) {
  return math::softmax_cross_entropy_row(z, classes, columns, target, grad_scale, dz);
}
[[gnu::flatten, gnu::target("avx512f,fma")]] float row_avx512(const float* z, std::int64_t classes,
                                                              std::int64_t columns,
                                                              std::int32_t target, float grad_scale,
                                                              float* dz) {
  return math::softmax_cross_entropy_row(z, classes, columns, target, grad_scale, dz);
}
#endif

}  // namespace

float softmax_cross_entropy_row_f32(const float* z, std::int64_t classes, std::int64_t columns,
                                    std::int32_t target, float grad_scale, float* dz,
                                    VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(
      std::find(isas.begin(), isas.end(), isa) != isas.end(),
      "cross-entropy asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return row_avx512(z, classes, columns, target, grad_scale, dz);
    case VectorIsa::kAvx2:
      return row_avx2(z, classes, columns, target, grad_scale, dz);
#endif
    default:
      return row_baseline(z, classes, columns, target, grad_scale, dz);
  }
}

}  // namespace zt::nn::cpu
