// Element types (f32, bf16, f16) and their conversions to and from f32, rounding to nearest
// even. Arithmetic always accumulates in f32; bf16/f16 are storage and compute formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/host_device.h"

namespace zt {

// kI32 holds token ids and class labels; the floating types hold everything else.
enum class DType : std::uint8_t { kF32, kBF16, kF16, kI32 };

constexpr std::size_t dtype_size(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kI32 ? 4 : 2;
}
constexpr bool is_floating(DType dtype) { return dtype != DType::kI32; }
std::string_view dtype_name(DType dtype);

namespace detail {
// std::bit_cast, usable in device code too: nvcc treats std::bit_cast as a constexpr __host__
// function and refuses it in __device__ code unless --expt-relaxed-constexpr is on for every
// CUDA target. The builtin behind it (GCC 11+, Clang 9+, nvcc) works on both sides.
template <typename To, typename From>
ZT_HOST_DEVICE constexpr To bit_cast(const From& value) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  return __builtin_bit_cast(To, value);
}
}  // namespace detail

// Bit conversions. Note [Rounding to nearest even]: adding 0x7FFF plus the lowest kept bit
// before truncating rounds halfway cases towards the even mantissa, as IEEE 754 requires.
// NaNs are kept quiet NaNs (never rounded into infinity).
ZT_HOST_DEVICE std::uint16_t f32_to_bf16_bits(float value) {
  const std::uint32_t bits = detail::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN: keep sign, force a quiet mantissa bit
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  }
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

ZT_HOST_DEVICE float bf16_bits_to_f32(std::uint16_t bits) {
  return detail::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// f32 -> IEEE binary16, round to nearest even, overflow to infinity, gradual underflow.
ZT_HOST_DEVICE std::uint16_t f32_to_f16_bits(float value) {
  const std::uint32_t bits = detail::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);   // NaN
  if (abs >= 0x47800000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65536: inf
  if (abs < 0x38800000u) {
    // Below the smallest normal f16 (2^-14): a denormal or zero. Shift the full mantissa
    // (with its implicit bit) into place and round to nearest even on the dropped bits.
    if (abs < 0x33000000u) return sign;  // below half the smallest denormal: rounds to 0
    const std::uint32_t exponent = abs >> 23;
    const std::uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // 14..24
    const std::uint32_t kept = mantissa >> shift;
    const std::uint32_t dropped = mantissa & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    const std::uint32_t rounded =
        kept + ((dropped > half || (dropped == half && (kept & 1u))) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  const std::uint32_t rebased = abs - 0x38000000u;
  const std::uint32_t lsb = (rebased >> 13) & 1u;
  const std::uint32_t rounded = (rebased + 0xFFFu + lsb) >> 13;  // may carry into inf: correct
  return static_cast<std::uint16_t>(sign | rounded);
}

ZT_HOST_DEVICE float f16_bits_to_f32(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1Fu;
  const std::uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1Fu) {  // inf or NaN
    return detail::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return detail::bit_cast<float>(sign);
    // Denormal: value = mantissa * 2^-24, exact in f32.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return detail::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// Storage types with value semantics; conversions are explicit through the functions above.
struct BF16 {
  std::uint16_t bits = 0;
  BF16() = default;
  ZT_HOST_DEVICE explicit BF16(float value) : bits(f32_to_bf16_bits(value)) {}
  ZT_HOST_DEVICE explicit operator float() const { return bf16_bits_to_f32(bits); }
};

struct F16 {
  std::uint16_t bits = 0;
  F16() = default;
  ZT_HOST_DEVICE explicit F16(float value) : bits(f32_to_f16_bits(value)) {}
  ZT_HOST_DEVICE explicit operator float() const { return f16_bits_to_f32(bits); }
};

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<BF16>() {
  return DType::kBF16;
}
template <>
constexpr DType dtype_of<F16>() {
  return DType::kF16;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::kI32;
}

// Converts `count` elements between floating dtypes (through f32); src and dst may not
// overlap unless the dtypes are equal.
void convert_elements(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                      std::size_t count);

}  // namespace zt
