// Bulk f32 <-> bf16 conversion on the widest vector path this CPU has, chosen at run time, with
// the bits of core/dtype.h's scalar f32_to_bf16_bits and bf16_bits_to_f32 on every path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace zt {

// Note [bf16 conversion paths]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every bf16 tensor a CPU kernel reads is widened and every one it writes is rounded, so on
// the CPU bf16 training converts about as many elements as it multiplies. The scalar
// conversion is exact but does not vectorize well (its NaN branch), so it runs per path:
//   kScalar      the ZT_HOST_DEVICE functions of core/dtype.h, one element at a time;
//   kAvx2        8 lanes: widening is a 16-bit shift; rounding adds 0x7FFF plus the lowest
//                kept bit in integer lanes (Note [Rounding to nearest even]) and blends in
//                the quiet NaN;
//   kAvx512      the same on 16 lanes (AVX-512F);
//   kAvx512Bf16  AVX512_BF16's vcvtneps2bf16 rounds as we do, NaNs included, but reads a
//                denormal input as zero: a vector holding one (rare: below 2^-126) is redone
//                on the kAvx512 path, so the bits stay those of the scalar conversion.
// Every path gives the same bits for every input (tests/unit/core/bf16_convert_test.cpp runs
// each path this CPU has over all 2^32 f32 patterns), so results do not depend on the machine.
// An AVX2-only CPU (AMD EPYC Zen 2/3) takes kAvx2; any other CPU kScalar.
enum class Bf16ConvertPath : std::uint8_t { kScalar, kAvx2, kAvx512, kAvx512Bf16 };

std::string_view bf16_convert_path_name(Bf16ConvertPath path);
bool bf16_convert_path_available(Bf16ConvertPath path);
// The available paths, narrowest first (kScalar is always there).
std::vector<Bf16ConvertPath> available_bf16_convert_paths();
Bf16ConvertPath best_bf16_convert_path();

// dst[i] = BF16(src[i]) for i < count, on the best path (or on `path`, which must be
// available: tests force the narrower ones).
void f32_to_bf16(const float* src, BF16* dst, std::size_t count);
void f32_to_bf16(Bf16ConvertPath path, const float* src, BF16* dst, std::size_t count);
// dst[i] = float(src[i]) for i < count.
void bf16_to_f32(const BF16* src, float* dst, std::size_t count);
void bf16_to_f32(Bf16ConvertPath path, const BF16* src, float* dst, std::size_t count);

}  // namespace zt
