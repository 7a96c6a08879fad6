// The kAvx2 path of Note [bf16 conversion paths] (core/bf16_convert.h): 8 lanes. Compiled
// with per-function target attributes, not global -m flags, so the library still runs on any
// x86-64; bf16_convert_path_available(kAvx2) guards every call.
#include "core/bf16_convert_internal.h"
#include "core/bf16_lanes_x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define ZT_AVX2_TARGET __attribute__((target("avx2")))

namespace zt::detail {
namespace {

constexpr std::size_t kLanes = 8;

}  // namespace

ZT_AVX2_TARGET void f32_to_bf16_avx2(const float* src, BF16* dst, std::size_t count) {
  // Two vectors per iteration: packus narrows 16 lanes at once (every lane is <= 0xFFFF, so
  // nothing saturates), interleaving 128-bit halves that the permute puts back in order.
  std::size_t i = elements_to_alignment(dst, 32, count);
  f32_to_bf16_scalar(src, dst, i);
  for (; i + 2 * kLanes <= count; i += 2 * kLanes) {
    const __m256i low =
        bf16_lanes::round_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    const __m256i high = bf16_lanes::round_avx2(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + kLanes)));
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(low, high), 0xD8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  f32_to_bf16_scalar(src + i, dst + i, count - i);
}

ZT_AVX2_TARGET void bf16_to_f32_avx2(const BF16* src, float* dst, std::size_t count) {
  std::size_t i = elements_to_alignment(dst, 32, count);
  bf16_to_f32_scalar(src, dst, i);
  for (; i + kLanes <= count; i += kLanes) {
    const __m256i widened =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(widened, 16));
  }
  bf16_to_f32_scalar(src + i, dst + i, count - i);
}

}  // namespace zt::detail

#else  // not x86: bf16_convert_path_available(kAvx2) is false, so these are never reached.

namespace zt::detail {
void f32_to_bf16_avx2(const float* src, BF16* dst, std::size_t count) {
  f32_to_bf16_scalar(src, dst, count);
}
void bf16_to_f32_avx2(const BF16* src, float* dst, std::size_t count) {
  bf16_to_f32_scalar(src, dst, count);
}
}  // namespace zt::detail

#endif
