// CPU block quantization: chunks of whole blocks in parallel; a block's bits depend on its
// own elements only, so the chunking cannot change the result. Each loop is compiled for the
// baseline, AVX2 and AVX-512 (Note [One loop, three instruction sets] in gelu_cpu.cpp): rint
// needs SSE4.1's round instruction to vectorize at all. Division, rint, compares and one
// product per element have no order and nothing to fuse, so every path gives the same bits.
#include "nn/kernels/cpu/block_quant_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/parallel_for.h"

namespace zt::nn::cpu {
namespace {

// Blocks per chunk: about kParallelGrainElements elements, at least one block.
std::int64_t block_grain(std::int64_t block_elements) {
  return std::max<std::int64_t>(1, kParallelGrainElements / block_elements);
}

template <typename T>
[[gnu::always_inline]] inline void quantize_range(const T* x, std::int64_t count,
                                                  const math::BlockQuantFormat& format,
                                                  std::uint8_t* payload, float* scales,
                                                  std::int64_t first, std::int64_t last) {
  const std::int64_t block = format.block_elements;
  const std::int64_t block_bytes = math::quant_block_bytes(block, format.bits);
  for (std::int64_t b = first; b < last; ++b) {
    const std::int64_t n = std::min(block, count - b * block);
    math::quantize_block(x + b * block, n, format.bits, payload + b * block_bytes, scales + b);
  }
}

template <typename T>
[[gnu::always_inline]] inline void dequantize_block(const std::uint8_t* payload, float scale,
                                                    std::int64_t n, math::QuantBits bits, T* y) {
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
  if (n % 2 == 1) {
    y[n - 1] = T(math::dequantize_value(math::unpack_int4_low(payload[pairs]), scale));
  }
}

template <typename T>
[[gnu::always_inline]] inline void dequantize_range(const std::uint8_t* payload,
                                                    const float* scales, std::int64_t count,
                                                    const math::BlockQuantFormat& format, T* y,
                                                    std::int64_t first, std::int64_t last) {
  const std::int64_t block = format.block_elements;
  const std::int64_t block_bytes = math::quant_block_bytes(block, format.bits);
  for (std::int64_t b = first; b < last; ++b) {
    const std::int64_t n = std::min(block, count - b * block);
    dequantize_block(payload + b * block_bytes, scales[b], n, format.bits, y + b * block);
  }
}

// One instantiation of both loops per instruction set.
#define ZT_QUANT_PATH(suffix, attribute)                                                        \
  template <typename T>                                                                         \
  attribute void quantize_##suffix(const T* x, std::int64_t count,                              \
                                   const math::BlockQuantFormat& format, std::uint8_t* payload, \
                                   float* scales, std::int64_t first, std::int64_t last) {      \
    quantize_range(x, count, format, payload, scales, first, last);                             \
  }                                                                                             \
  template <typename T>                                                                         \
  attribute void dequantize_##suffix(const std::uint8_t* payload, const float* scales,          \
                                     std::int64_t count, const math::BlockQuantFormat& format,  \
                                     T* y, std::int64_t first, std::int64_t last) {             \
    dequantize_range(payload, scales, count, format, y, first, last);                           \
  }
ZT_QUANT_PATH(baseline, )
#if defined(__x86_64__)
ZT_QUANT_PATH(avx2, [[gnu::target("avx2,fma")]])
ZT_QUANT_PATH(avx512, [[gnu::target("avx512f,avx512bw,fma")]])
#endif
#undef ZT_QUANT_PATH

void check_isa(VectorIsa isa) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(std::find(isas.begin(), isas.end(), isa) != isas.end(),
           "block quantization asked for " + std::string(vector_isa_name(isa)) +
               ", which this CPU lacks");
}

}  // namespace

template <typename T>
void quantize_blocks(const T* x, std::int64_t count, const math::BlockQuantFormat& format,
                     std::uint8_t* payload, float* scales, VectorIsa isa) {
  ZT_CHECK(format.block_elements > 0, "quantization blocks must hold at least one element");
  check_isa(isa);
  parallel_for(math::quant_block_count(count, format.block_elements),
               block_grain(format.block_elements), [&](std::int64_t first, std::int64_t last) {
                 switch (isa) {
#if defined(__x86_64__)
                   case VectorIsa::kAvx512:
                     return quantize_avx512(x, count, format, payload, scales, first, last);
                   case VectorIsa::kAvx2:
                     return quantize_avx2(x, count, format, payload, scales, first, last);
#endif
                   default:
                     return quantize_baseline(x, count, format, payload, scales, first, last);
                 }
               });
  const std::int64_t bytes = math::quant_payload_bytes(count, format);
  const std::int64_t padded = 4 * math::quant_payload_words(count, format);
  // Nothing to pad for zero elements, where `payload` may be null (an empty vector's data()).
  if (padded > bytes) std::memset(payload + bytes, 0, static_cast<std::size_t>(padded - bytes));
}

template <typename T>
void dequantize_blocks(const std::uint8_t* payload, const float* scales, std::int64_t count,
                       const math::BlockQuantFormat& format, T* y, VectorIsa isa) {
  ZT_CHECK(format.block_elements > 0, "quantization blocks must hold at least one element");
  check_isa(isa);
  parallel_for(math::quant_block_count(count, format.block_elements),
               block_grain(format.block_elements), [&](std::int64_t first, std::int64_t last) {
                 switch (isa) {
#if defined(__x86_64__)
                   case VectorIsa::kAvx512:
                     return dequantize_avx512(payload, scales, count, format, y, first, last);
                   case VectorIsa::kAvx2:
                     return dequantize_avx2(payload, scales, count, format, y, first, last);
#endif
                   default:
                     return dequantize_baseline(payload, scales, count, format, y, first, last);
                 }
               });
}

#define ZT_INSTANTIATE(T)                                                                 \
  template void quantize_blocks<T>(const T*, std::int64_t, const math::BlockQuantFormat&, \
                                   std::uint8_t*, float*, VectorIsa);                     \
  template void dequantize_blocks<T>(const std::uint8_t*, const float*, std::int64_t,     \
                                     const math::BlockQuantFormat&, T*, VectorIsa);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
ZT_INSTANTIATE(F16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cpu
