// Size classes of pooled host blocks: powers of two from 64 B, each split into 4 steps, so a
// block is at most 25% larger than asked for and a freed block serves any request of its class.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

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

// A dense number for each class, so that a pool can keep its free lists in an array: 0 to 3
// for 64 to 256 B, then four per power of two (320, 384, 448, 512 are 4 to 7).
constexpr std::size_t host_size_class_index(std::size_t class_bytes) {
  if (class_bytes <= 4 * kSmallestHostBlockBytes) return class_bytes / kSmallestHostBlockBytes - 1;
  const std::size_t power = std::bit_floor(class_bytes - 1);  // 2^p < class <= 2^(p+1), p >= 8
  const auto p = static_cast<std::size_t>(std::bit_width(power) - 1);
  return 4 + 4 * (p - 8) + (class_bytes / (power / 4) - 5);
}

// The class with index `index` (the inverse of host_size_class_index).
constexpr std::size_t host_size_class_at(std::size_t index) {
  if (index < 4) return (index + 1) * kSmallestHostBlockBytes;
  const std::size_t p = 8 + (index - 4) / 4;
  return (5 + (index - 4) % 4) << (p - 2);
}

// Classes up to 2^63 B: no host allocation is larger.
inline constexpr std::size_t kHostSizeClassCount = host_size_class_index(std::size_t{1} << 63) + 1;
static_assert(host_size_class_at(kHostSizeClassCount - 1) == std::size_t{1} << 63);
static_assert(host_size_class_index(host_size_class_bytes(1000)) == 11);  // 1024 B

}  // namespace zt
