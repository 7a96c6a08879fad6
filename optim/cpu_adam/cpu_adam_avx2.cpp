// The CPU Adam on 8-float AVX2 vectors with FMA, and F16C for the f16 copy. Compiled with
// per-function target attributes, not global -m flags, so the library still runs on any
// x86-64; cpu_adam_path_available(kAvx2) guards every call. Note [CPU Adam paths agree bit
// for bit] (cpu_adam.h) says how its results relate to the scalar path.
#include <cstdint>

#include "core/bf16_lanes_x86.h"
#include "optim/cpu_adam/cpu_adam_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZT_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

namespace zt::optim::detail {
namespace {

constexpr std::size_t kLanes = 8;

enum class ComputeCopy { kNone, kBF16, kF16 };

// f32_to_bf16_bits on 8 lanes (core/bf16_lanes_x86.h), packed to 8 bf16 values: every lane
// is <= 0xFFFF, so the saturating pack only narrows.
ZT_AVX2_TARGET inline __m128i to_bf16_bits(__m256 value) {
  const __m256i halves = bf16_lanes::round_avx2(_mm256_castps_si256(value));
  return _mm_packus_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
}

// f32_to_f16_bits on 8 lanes: F16C rounds to nearest even with IEEE overflow and gradual
// underflow, as core does; only NaNs differ (F16C keeps payload bits), so they are replaced
// by core's sign | 0x7E00.
ZT_AVX2_TARGET inline __m128i to_f16_bits(__m256 value) {
  const __m128i converted = _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT);
  const __m256i bits = _mm256_castps_si256(value);
  const __m256i nan32 =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x8000)),
                      _mm256_set1_epi32(0x7E00));
  const __m128i nan16 =
      _mm_packus_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
  const __m256i is_nan32 = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
  const __m128i is_nan16 =
      _mm_packs_epi32(_mm256_castsi256_si128(is_nan32), _mm256_extracti128_si256(is_nan32, 1));
  return _mm_blendv_epi8(converted, nan16, is_nan16);
}

// math::adam_update on 8 lanes, operation for operation: the same fused multiply-adds and
// the same single roundings in the same order (Note [One rounding sequence on every path]).
template <bool kDecoupled, ComputeCopy kCopy>
ZT_AVX2_TARGET void update_vectors(const CpuAdamGroup& group, const math::AdamStepScalars& s,
                                   std::size_t vector_elements) {
  const __m256 lr = _mm256_set1_ps(s.lr);
  const __m256 weight_decay = _mm256_set1_ps(s.weight_decay);
  const __m256 lr_weight_decay = _mm256_set1_ps(s.lr * s.weight_decay);
  const __m256 beta1 = _mm256_set1_ps(s.beta1);
  const __m256 one_minus_beta1 = _mm256_set1_ps(1.0f - s.beta1);
  const __m256 beta2 = _mm256_set1_ps(s.beta2);
  const __m256 one_minus_beta2 = _mm256_set1_ps(1.0f - s.beta2);
  const __m256 eps = _mm256_set1_ps(s.eps);
  const __m256 bias_correction1 = _mm256_set1_ps(s.bias_correction1);
  const __m256 bias_correction2 = _mm256_set1_ps(s.bias_correction2);
  float* params = group.params;
  const float* grads = group.grads;
  float* exp_avg = group.exp_avg;
  float* exp_avg_sq = group.exp_avg_sq;
  auto* out = static_cast<std::uint16_t*>(group.compute_params);
  for (std::size_t i = 0; i < vector_elements; i += kLanes) {
    __m256 p = _mm256_loadu_ps(params + i);
    __m256 g = _mm256_loadu_ps(grads + i);
    __m256 m = _mm256_loadu_ps(exp_avg + i);
    __m256 v = _mm256_loadu_ps(exp_avg_sq + i);
    if constexpr (kDecoupled) {
      p = _mm256_fnmadd_ps(lr_weight_decay, p, p);  // p - (lr·wd)·p
    } else {
      g = _mm256_fmadd_ps(weight_decay, p, g);  // g + wd·p
    }
    m = _mm256_fmadd_ps(beta1, m, _mm256_mul_ps(one_minus_beta1, g));
    v = _mm256_fmadd_ps(beta2, v, _mm256_mul_ps(_mm256_mul_ps(one_minus_beta2, g), g));
    const __m256 m_hat = _mm256_div_ps(m, bias_correction1);
    const __m256 v_hat = _mm256_div_ps(v, bias_correction2);
    const __m256 update =
        _mm256_div_ps(_mm256_mul_ps(lr, m_hat), _mm256_add_ps(_mm256_sqrt_ps(v_hat), eps));
    p = _mm256_sub_ps(p, update);
    _mm256_storeu_ps(params + i, p);
    _mm256_storeu_ps(exp_avg + i, m);
    _mm256_storeu_ps(exp_avg_sq + i, v);
    if constexpr (kCopy == ComputeCopy::kBF16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), to_bf16_bits(p));
    } else if constexpr (kCopy == ComputeCopy::kF16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), to_f16_bits(p));
    }
  }
}

template <bool kDecoupled>
void update_vectors_with_copy(const CpuAdamGroup& group, const math::AdamStepScalars& s,
                              std::size_t vector_elements) {
  if (group.compute_params == nullptr) {
    update_vectors<kDecoupled, ComputeCopy::kNone>(group, s, vector_elements);
  } else if (group.compute_dtype == DType::kBF16) {
    update_vectors<kDecoupled, ComputeCopy::kBF16>(group, s, vector_elements);
  } else {
    update_vectors<kDecoupled, ComputeCopy::kF16>(group, s, vector_elements);
  }
}

}  // namespace

void cpu_adam_avx2(const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
  const std::size_t vector_elements = group.elements / kLanes * kLanes;
  if (scalars.decoupled) {
    update_vectors_with_copy<true>(group, scalars, vector_elements);
  } else {
    update_vectors_with_copy<false>(group, scalars, vector_elements);
  }
  cpu_adam_scalar(slice_cpu_adam_group(group, vector_elements, group.elements - vector_elements),
                  scalars);
}

}  // namespace zt::optim::detail

#else  // not x86: cpu_adam_path_available(kAvx2) is false, so this is never reached.

namespace zt::optim::detail {
void cpu_adam_avx2(const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
  cpu_adam_scalar(group, scalars);
}
}  // namespace zt::optim::detail

#endif
