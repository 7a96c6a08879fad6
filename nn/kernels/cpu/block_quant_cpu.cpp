// CPU block quantization: chunks of whole blocks in parallel; a block's bits depend on its
// own elements only, so the chunking cannot change the result.
#include "nn/kernels/cpu/block_quant_cpu.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/parallel_for.h"

namespace zt::nn::cpu {
namespace {

// Blocks per chunk: about kParallelGrainElements elements, at least one block.
std::int64_t block_grain(std::int64_t block_elements) {
  return std::max<std::int64_t>(1, kParallelGrainElements / block_elements);
}

template <typename T>
void dequantize_block(const std::uint8_t* payload, float scale, std::int64_t n,
                      math::QuantBits bits, T* y) {
  if (bits == math::QuantBits::kInt8) {
    for (std::int64_t i = 0; i < n; ++i) {
      y[i] = T(math::dequantize_value(static_cast<std::int8_t>(payload[i]), scale));
    }
    return;
  }
  const std::int64_t pairs = n / 2;
  for (std::int64_t j = 0; j < pairs; ++j) {
    y[2 * j] = T(math::dequantize_value(math::unpack_int4_low(payload[j]), scale));
    y[2 * j + 1] = T(math::dequantize_value(math::unpack_int4_high(payload[j]), scale));
  }
  if (n % 2 == 1)
    y[n - 1] = T(math::dequantize_value(math::unpack_int4_low(payload[pairs]), scale));
}

}  // namespace

template <typename T>
void quantize_blocks(const T* x, std::int64_t count, const math::BlockQuantFormat& format,
                     std::uint8_t* payload, float* scales) {
  ZT_CHECK(format.block_elements > 0, "quantization blocks must hold at least one element");
  const std::int64_t block = format.block_elements;
  const std::int64_t block_bytes = math::quant_block_bytes(block, format.bits);
  parallel_for(math::quant_block_count(count, block), block_grain(block),
               [&](std::int64_t first, std::int64_t last) {
                 for (std::int64_t b = first; b < last; ++b) {
                   const std::int64_t n = std::min(block, count - b * block);
                   math::quantize_block(x + b * block, n, format.bits, payload + b * block_bytes,
                                        scales + b);
                 }
               });
  const std::int64_t bytes = math::quant_payload_bytes(count, format);
  std::memset(payload + bytes, 0,
              static_cast<std::size_t>(4 * math::quant_payload_words(count, format) - bytes));
}

template <typename T>
void dequantize_blocks(const std::uint8_t* payload, const float* scales, std::int64_t count,
                       const math::BlockQuantFormat& format, T* y) {
  ZT_CHECK(format.block_elements > 0, "quantization blocks must hold at least one element");
  const std::int64_t block = format.block_elements;
  const std::int64_t block_bytes = math::quant_block_bytes(block, format.bits);
  parallel_for(math::quant_block_count(count, block), block_grain(block),
               [&](std::int64_t first, std::int64_t last) {
                 for (std::int64_t b = first; b < last; ++b) {
                   const std::int64_t n = std::min(block, count - b * block);
                   dequantize_block(payload + b * block_bytes, scales[b], n, format.bits,
                                    y + b * block);
                 }
               });
}

#define ZT_INSTANTIATE(T)                                                                 \
  template void quantize_blocks<T>(const T*, std::int64_t, const math::BlockQuantFormat&, \
                                   std::uint8_t*, float*);                                \
  template void dequantize_blocks<T>(const std::uint8_t*, const float*, std::int64_t,     \
                                     const math::BlockQuantFormat&, T*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
ZT_INSTANTIATE(F16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cpu
