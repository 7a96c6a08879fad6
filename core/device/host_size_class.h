// Size classes of pooled host blocks: powers of two from 64 B, each split into 4 steps, so a
// block is at most 25% larger than asked for and a freed block serves any request of its class.
#pragma once

#include <bit>
#include <cstddef>

namespace zt {

inline constexpr std::size_t kSmallestHostBlockBytes = 64;

// The class `bytes` falls in: 64, 128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
// 1280, ...: multiples of a quarter of the power of two below `bytes`, and always of 64.
constexpr std::size_t host_size_class_bytes(std::size_t bytes) {
  if (bytes <= kSmallestHostBlockBytes) return kSmallestHostBlockBytes;
  // 2^p < bytes <= 2^(p+1): steps of 2^p / 4 up to 2^(p+1).
  const std::size_t power = std::bit_floor(bytes - 1);
  const std::size_t step =
      power / 4 < kSmallestHostBlockBytes ? kSmallestHostBlockBytes : power / 4;
  return (bytes + step - 1) / step * step;
}

}  // namespace zt
