// The per-path loops behind core/bf16_convert.h; private to core/bf16_convert*.cpp. Each
// vector loop converts whole vectors and hands its tail to the scalar loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace zt::detail {

// Elements of `T` before `dst` reaches a multiple of `alignment` bytes (at most `count`): a
// vector loop converts those on the scalar path first, so that none of its stores splits a
// cache line (a split store costs a vector loop a third of its speed on buffers in L2).
template <typename T>
std::size_t elements_to_alignment(const T* dst, std::size_t alignment, std::size_t count) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(dst) % alignment;
  const std::size_t elements = misalignment == 0 ? 0 : (alignment - misalignment) / sizeof(T);
  return std::min(elements, count);
}

void f32_to_bf16_scalar(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_scalar(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx2(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_avx2(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx512(const float* src, BF16* dst, std::size_t count);
void bf16_to_f32_avx512(const BF16* src, float* dst, std::size_t count);
void f32_to_bf16_avx512_bf16(const float* src, BF16* dst, std::size_t count);

}  // namespace zt::detail
