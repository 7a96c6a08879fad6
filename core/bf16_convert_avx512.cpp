// The kAvx512 and kAvx512Bf16 paths of Note [bf16 conversion paths] (core/bf16_convert.h):
// 16 lanes. Compiled with per-function target attributes, not global -m flags, so the library
// still runs on any x86-64; bf16_convert_path_available guards every call.
#include "core/bf16_convert_internal.h"
#include "core/bf16_lanes_x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZT_AVX512_TARGET __attribute__((target("avx512f")))
#define ZT_AVX512_BF16_TARGET __attribute__((target("avx512f,avx512bf16")))

// GCC 12's AVX-512 intrinsics start from `__m512i __Y = __Y;` (_mm512_undefined_*), which
// -Wmaybe-uninitialized reports wherever they inline (GCC bug 105593, fixed in GCC 13): a
// false positive on correct code, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace zt::detail {
namespace {

constexpr std::size_t kLanes = 16;

}  // namespace

ZT_AVX512_TARGET void f32_to_bf16_avx512(const float* src, BF16* dst, std::size_t count) {
  std::size_t i = elements_to_alignment(dst, 32, count);
  f32_to_bf16_scalar(src, dst, i);
  for (; i + kLanes <= count; i += kLanes) {
    const __m256i bf16 = bf16_lanes::round_avx512(_mm512_loadu_si512(src + i));
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), bf16);
  }
  f32_to_bf16_scalar(src + i, dst + i, count - i);
}

ZT_AVX512_TARGET void bf16_to_f32_avx512(const BF16* src, float* dst, std::size_t count) {
  std::size_t i = elements_to_alignment(dst, 64, count);
  bf16_to_f32_scalar(src, dst, i);
  for (; i + kLanes <= count; i += kLanes) {
    const __m512i widened =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_store_si512(dst + i, _mm512_slli_epi32(widened, 16));
  }
  bf16_to_f32_scalar(src + i, dst + i, count - i);
}

ZT_AVX512_BF16_TARGET void f32_to_bf16_avx512_bf16(const float* src, BF16* dst, std::size_t count) {
  const __m512i exponent = _mm512_set1_epi32(0x7F800000);
  const __m512i mantissa = _mm512_set1_epi32(0x007FFFFF);
  std::size_t i = elements_to_alignment(dst, 32, count);
  f32_to_bf16_scalar(src, dst, i);
  for (; i + kLanes <= count; i += kLanes) {
    const __m512i bits = _mm512_loadu_si512(src + i);
    // vcvtneps2bf16 reads denormals as zero; the integer rounding keeps them.
    const __mmask16 denormal =
        _mm512_mask_test_epi32_mask(_mm512_testn_epi32_mask(bits, exponent), bits, mantissa);
    const __m256i bf16 =
        denormal == 0 ? __builtin_bit_cast(__m256i, _mm512_cvtneps_pbh(_mm512_castsi512_ps(bits)))
                      : bf16_lanes::round_avx512(bits);
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), bf16);
  }
  f32_to_bf16_scalar(src + i, dst + i, count - i);
}

}  // namespace zt::detail

#else  // not x86: bf16_convert_path_available is false for these paths: never reached.

namespace zt::detail {
void f32_to_bf16_avx512(const float* src, BF16* dst, std::size_t count) {
  f32_to_bf16_scalar(src, dst, count);
}
void bf16_to_f32_avx512(const BF16* src, float* dst, std::size_t count) {
  bf16_to_f32_scalar(src, dst, count);
}
void f32_to_bf16_avx512_bf16(const float* src, BF16* dst, std::size_t count) {
  f32_to_bf16_scalar(src, dst, count);
}
}  // namespace zt::detail

#endif
