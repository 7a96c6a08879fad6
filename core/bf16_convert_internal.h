// The per-path loops behind core/bf16_convert.h; private to core/bf16_convert*.cpp. Each
// vector loop converts whole vectors and hands its tail to the scalar loop.
#pragma once

#include <cstddef>

#include "core/dtype.h"

namespace zt::detail {

void f32_to_bf16_scalar(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_scalar(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx2(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_avx2(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx512(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_avx512(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx512_bf16(const float* src, BF16* dst, std::size_t count);

}  // namespace zt::detail
