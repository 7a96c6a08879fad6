// Counter-based random numbers: the value for (key, index) is a pure function, so
// initialization and synthetic data are identical at every world size and shard layout.
#pragma once

#include <cmath>
#include <cstdint>

namespace zt {

// SplitMix64's finalizer: a bijective 64-bit mix with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A key for a named stream of numbers: combine a seed with stream ids.
constexpr std::uint64_t random_key(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return mix64(mix64(mix64(seed) ^ a) ^ b);
}

// Uniform in [0, 1) with 24 random bits, exact in float.
inline float uniform01(std::uint64_t key, std::uint64_t index) {
  return static_cast<float>(mix64(key ^ mix64(index)) >> 40) * 5.9604644775390625e-08f;
}

// Standard normal by Box-Muller on two uniforms derived from (key, index).
inline float standard_normal(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t bits = mix64(key ^ mix64(index));
  const double u1 = (static_cast<double>(bits >> 40) + 1.0) * 5.9604644775390625e-08;  // (0, 1]
  const double u2 = static_cast<double>(bits & 0xFFFFFFu) * 5.9604644775390625e-08;    // [0, 1)
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace zt
