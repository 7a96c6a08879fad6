// f32_to_bf16_bits (core/dtype.h, Note [Rounding to nearest even]) on a vector of lanes: round
// to nearest even by adding 0x7FFF plus the lowest kept bit, a NaN kept quiet with its sign.
// Integer arithmetic rather than AVX512_BF16's vcvtneps2bf16, which reads denormal inputs as
// zero. Shared by the bf16 conversions (core/bf16_convert_avx*.cpp) and the CPU Adam's fused
// bf16 copy (optim/cpu_adam), so every vector path rounds with these same operations.
// Each function carries its own target attribute: include it only from code compiled for (or
// guarded by a check of) that instruction set.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace zt::bf16_lanes {

// 8 lanes of f32 bits; each result in the low 16 bits of its 32-bit lane.
__attribute__((target("avx2"))) inline __m256i round_avx2(__m256i bits) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  // The magnitude has its top bit clear, so a signed compare orders it correctly.
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)),
                                            _mm256_set1_epi32(0x7F800000));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}

// 16 lanes of f32 bits, narrowed to 16 bf16 values.
__attribute__((target("avx512f"))) inline __m256i round_avx512(__m512i bits) {
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(
      _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, rounded, quiet_nan));
}

}  // namespace zt::bf16_lanes

#endif
