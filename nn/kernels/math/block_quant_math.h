// Block-wise symmetric int8/int4 quantization shared by the CPU and CUDA kernels: the wire
// format of the quantized weight all-gather (qwZ) and gradient reduce-scatter (qgZ), its
// sizes, and the per-element arithmetic both devices run bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"

namespace zt::nn::math {

// Note [Block quantization format]
// A run of `count` elements is cut into blocks of `block_elements` (any positive value; the
// last block holds the remainder and may be short: no divisibility rule on count). Each block
// has one f32 scale and its elements become signed integers q in [-qmax, qmax]:
//   scale = max_i |x_i| / qmax           qmax = 127 (int8) or 7 (int4)
//   q_i   = clamp(rint(x_i / scale), -qmax, qmax)   rint: round to nearest, ties to even
//   x'_i  = q_i * scale                  so |x_i - x'_i| <= scale / 2 (plus f32 round-off)
// - An all-zero block has scale 0 and q = 0, with no division; so does a block of
//   subnormals whose scale underflows to 0 (max|x| < qmax * 2^-150). A subnormal scale
//   (max|x| < qmax * 2^-126, about 1.5e-36 for int8) keeps fewer bits, and there the bound
//   loosens to the rounding of the scale itself; weights and gradients that small are zeros
//   to the training anyway.
// - Non-finite input (NaN or +-inf anywhere in a block) makes the block's scale a quiet NaN
//   (0x7FC00000, one pattern whatever the input's) and its q 0: every dequantized element of
//   the block is then NaN, so the non-finite check after the reduction (loss scaling's
//   overflow check) still sees the step's overflow, and no inf becomes a finite value.
// - Payload layout: int8, one byte per element in element order. int4, two's-complement
//   nibbles, element 2j of a block in the low nibble of the block's byte j, element 2j + 1 in
//   the high nibble; every block starts on a byte of its own (a block of odd length leaves its
//   last high nibble 0), so block b's bytes start at b * ceil(block_elements / 2) and a slice
//   of whole blocks is a slice of the payload.
// - Scales are one f32 per block, in block order, in a buffer of their own.
// Division rather than a multiply by qmax / max: the reciprocal overflows for tiny blocks,
// and IEEE division rounds the same on both devices (no fast math in these targets).
enum class QuantBits : std::uint8_t { kInt4 = 4, kInt8 = 8 };

struct BlockQuantFormat {
  QuantBits bits = QuantBits::kInt8;
  std::int64_t block_elements = 2048;
};

ZT_HOST_DEVICE int quant_max(QuantBits bits) { return bits == QuantBits::kInt8 ? 127 : 7; }

// Number of blocks (scales) for `count` elements.
ZT_HOST_DEVICE std::int64_t quant_block_count(std::int64_t count, std::int64_t block_elements) {
  return (count + block_elements - 1) / block_elements;
}
// Payload bytes of a block of `elements` elements.
ZT_HOST_DEVICE std::int64_t quant_block_bytes(std::int64_t elements, QuantBits bits) {
  return bits == QuantBits::kInt8 ? elements : (elements + 1) / 2;
}
// Payload bytes of `count` elements: whole blocks, then the short last one.
ZT_HOST_DEVICE std::int64_t quant_payload_bytes(std::int64_t count,
                                                const BlockQuantFormat& format) {
  const std::int64_t whole = count / format.block_elements;
  const std::int64_t tail = count - whole * format.block_elements;
  return whole * quant_block_bytes(format.block_elements, format.bits) +
         quant_block_bytes(tail, format.bits);
}
ZT_HOST_DEVICE std::int64_t quant_scale_bytes(std::int64_t count, const BlockQuantFormat& format) {
  return quant_block_count(count, format.block_elements) * static_cast<std::int64_t>(sizeof(float));
}
// The payload travels in an i32 tensor (there is no byte dtype): its bytes rounded up to
// whole words, the padding written 0.
ZT_HOST_DEVICE std::int64_t quant_payload_words(std::int64_t count,
                                                const BlockQuantFormat& format) {
  return (quant_payload_bytes(count, format) + 3) / 4;
}

// |x| as bits: for non-negative floats the unsigned order of the bits is the order of the
// values, and every NaN lies above inf, so an integer max over them finds max|x|, or inf, or
// a NaN, the same in any order (fmaxf would drop a NaN) and in vector registers.
ZT_HOST_DEVICE std::uint32_t quant_abs_bits(float x) {
  return detail::bit_cast<std::uint32_t>(x) & 0x7FFFFFFFu;
}
ZT_HOST_DEVICE std::uint32_t quant_abs_max(std::uint32_t running, std::uint32_t abs_bits) {
  return abs_bits > running ? abs_bits : running;
}

ZT_HOST_DEVICE float quant_nan() { return detail::bit_cast<float>(0x7FC00000u); }

// The block's scale from the bits of its max |x| (Note [Block quantization format]).
ZT_HOST_DEVICE float quant_scale(std::uint32_t abs_max_bits, QuantBits bits) {
  if (abs_max_bits >= 0x7F800000u) return quant_nan();  // inf or NaN in the block
  return detail::bit_cast<float>(abs_max_bits) / static_cast<float>(quant_max(bits));
}

// q = clamp(rint(x / scale)) for a block whose scale is > 0 (so its x are finite).
ZT_HOST_DEVICE int quantize_scaled(float x, float scale, QuantBits bits) {
  const float qmax = static_cast<float>(quant_max(bits));
  const float q = rintf(x / scale);
  return static_cast<int>(q < -qmax ? -qmax : (q > qmax ? qmax : q));
}
// Any block: 0 when scale is 0 or NaN (the comparison is false for NaN).
ZT_HOST_DEVICE int quantize_value(float x, float scale, QuantBits bits) {
  return scale > 0.0f ? quantize_scaled(x, scale, bits) : 0;
}

ZT_HOST_DEVICE float dequantize_value(int q, float scale) { return static_cast<float>(q) * scale; }

// int4 nibbles: two's complement in 4 bits, low = the even element.
ZT_HOST_DEVICE std::uint8_t pack_int4(int low, int high) {
  return static_cast<std::uint8_t>((low & 0xF) | ((high & 0xF) << 4));
}
ZT_HOST_DEVICE int unpack_int4_low(std::uint8_t byte) { return ((byte & 0xF) ^ 8) - 8; }
ZT_HOST_DEVICE int unpack_int4_high(std::uint8_t byte) { return ((byte >> 4) ^ 8) - 8; }

// One block on one thread (the CPU kernel's loop body): x (n) -> payload (quant_block_bytes)
// and *scale. T is float, BF16 or F16.
template <typename T>
ZT_HOST_DEVICE void quantize_block(const T* x, std::int64_t n, QuantBits bits,
                                   std::uint8_t* payload, float* scale_out) {
  std::uint32_t abs_max = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    abs_max = quant_abs_max(abs_max, quant_abs_bits(static_cast<float>(x[i])));
  }
  const float scale = quant_scale(abs_max, bits);
  *scale_out = scale;
  const std::int64_t bytes = quant_block_bytes(n, bits);
  if (!(scale > 0.0f)) {  // all zeros, or non-finite: q = 0 throughout
    for (std::int64_t j = 0; j < bytes; ++j) payload[j] = 0;
    return;
  }
  if (bits == QuantBits::kInt8) {
    for (std::int64_t i = 0; i < n; ++i) {
      payload[i] =
          static_cast<std::uint8_t>(quantize_scaled(static_cast<float>(x[i]), scale, bits));
    }
    return;
  }
  const std::int64_t pairs = n / 2;
  for (std::int64_t j = 0; j < pairs; ++j) {
    payload[j] = pack_int4(quantize_scaled(static_cast<float>(x[2 * j]), scale, bits),
                           quantize_scaled(static_cast<float>(x[2 * j + 1]), scale, bits));
  }
  if (n % 2 == 1)
    payload[pairs] = pack_int4(quantize_scaled(static_cast<float>(x[n - 1]), scale, bits), 0);
}

// Element i of a block from its payload, as f32.
ZT_HOST_DEVICE float dequantize_element(const std::uint8_t* payload, std::int64_t i, float scale,
                                        QuantBits bits) {
  if (bits == QuantBits::kInt8)
    return dequantize_value(static_cast<std::int8_t>(payload[i]), scale);
  const std::uint8_t byte = payload[i / 2];
  return dequantize_value(i % 2 == 0 ? unpack_int4_low(byte) : unpack_int4_high(byte), scale);
}

}  // namespace zt::nn::math
