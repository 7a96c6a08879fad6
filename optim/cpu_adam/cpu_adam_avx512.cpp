// The CPU Adam on 16-float AVX-512F vectors. Compiled with per-function target attributes,
// not global -m flags, so the library still runs on any x86-64; cpu_adam_path_available(
// kAvx512) guards every call. Note [CPU Adam paths agree bit for bit] (cpu_adam.h) says how
// its results relate to the scalar path.
#include <cstdint>

#include "core/bf16_lanes_x86.h"
#include "optim/cpu_adam/cpu_adam_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZT_AVX512_TARGET __attribute__((target("avx512f")))

// GCC 12's AVX-512 intrinsics start from `__m512i __Y = __Y;` (_mm512_undefined_*), which
// -Wmaybe-uninitialized reports wherever they inline (GCC bug 105593, fixed in GCC 13): a
// false positive on correct code, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace zt::optim::detail {
namespace {

constexpr std::size_t kLanes = 16;

enum class ComputeCopy { kNone, kBF16, kF16 };

// f32_to_bf16_bits on 16 lanes (core/bf16_lanes_x86.h).
ZT_AVX512_TARGET inline __m256i to_bf16_bits(__m512 value) {
  return bf16_lanes::round_avx512(_mm512_castps_si512(value));
}

// f32_to_f16_bits on 16 lanes: the hardware conversion rounds as core does; NaNs are
// replaced by core's sign | 0x7E00 (the hardware keeps payload bits).
ZT_AVX512_TARGET inline __m256i to_f16_bits(__m512 value) {
  const __m512i converted =
      _mm512_cvtepu16_epi32(_mm512_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT));
  const __m512i bits = _mm512_castps_si512(value);
  const __m512i nan =
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x8000)),
                      _mm512_set1_epi32(0x7E00));
  const __mmask16 is_nan = _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, converted, nan));
}

// math::adam_update on 16 lanes, operation for operation: the same fused multiply-adds and
// the same single roundings in the same order (Note [One rounding sequence on every path]).
template <bool kDecoupled, ComputeCopy kCopy>
ZT_AVX512_TARGET void update_vectors(const CpuAdamGroup& group, const math::AdamStepScalars& s,
                                     std::size_t vector_elements) {
  const __m512 lr = _mm512_set1_ps(s.lr);
  const __m512 weight_decay = _mm512_set1_ps(s.weight_decay);
  const __m512 lr_weight_decay = _mm512_set1_ps(s.lr * s.weight_decay);
  const __m512 beta1 = _mm512_set1_ps(s.beta1);
  const __m512 one_minus_beta1 = _mm512_set1_ps(1.0f - s.beta1);
  const __m512 beta2 = _mm512_set1_ps(s.beta2);
  const __m512 one_minus_beta2 = _mm512_set1_ps(1.0f - s.beta2);
  const __m512 eps = _mm512_set1_ps(s.eps);
  const __m512 bias_correction1 = _mm512_set1_ps(s.bias_correction1);
  const __m512 bias_correction2 = _mm512_set1_ps(s.bias_correction2);
  float* params = group.params;
  const float* grads = group.grads;
  float* exp_avg = group.exp_avg;
  float* exp_avg_sq = group.exp_avg_sq;
  auto* out = static_cast<std::uint16_t*>(group.compute_params);
  for (std::size_t i = 0; i < vector_elements; i += kLanes) {
    __m512 p = _mm512_loadu_ps(params + i);
    __m512 g = _mm512_loadu_ps(grads + i);
    __m512 m = _mm512_loadu_ps(exp_avg + i);
    __m512 v = _mm512_loadu_ps(exp_avg_sq + i);
    if constexpr (kDecoupled) {
      p = _mm512_fnmadd_ps(lr_weight_decay, p, p);  // p - (lr·wd)·p
    } else {
      g = _mm512_fmadd_ps(weight_decay, p, g);  // g + wd·p
    }
    m = _mm512_fmadd_ps(beta1, m, _mm512_mul_ps(one_minus_beta1, g));
    v = _mm512_fmadd_ps(beta2, v, _mm512_mul_ps(_mm512_mul_ps(one_minus_beta2, g), g));
    const __m512 m_hat = _mm512_div_ps(m, bias_correction1);
    const __m512 v_hat = _mm512_div_ps(v, bias_correction2);
    const __m512 update =
        _mm512_div_ps(_mm512_mul_ps(lr, m_hat), _mm512_add_ps(_mm512_sqrt_ps(v_hat), eps));
    p = _mm512_sub_ps(p, update);
    _mm512_storeu_ps(params + i, p);
    _mm512_storeu_ps(exp_avg + i, m);
    _mm512_storeu_ps(exp_avg_sq + i, v);
    if constexpr (kCopy == ComputeCopy::kBF16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), to_bf16_bits(p));
    } else if constexpr (kCopy == ComputeCopy::kF16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), to_f16_bits(p));
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

void cpu_adam_avx512(const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
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

#else  // not x86: cpu_adam_path_available(kAvx512) is false, so this is never reached.

namespace zt::optim::detail {
void cpu_adam_avx512(const CpuAdamGroup& group, const math::AdamStepScalars& scalars) {
  cpu_adam_scalar(group, scalars);
}
}  // namespace zt::optim::detail

#endif
