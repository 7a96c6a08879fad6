// Block-wise int8/int4 quantization on the CPU (Note [Block quantization format] in
// nn/kernels/math/block_quant_math.h): blocks in parallel, each a loop over the shared math,
// compiled for each vector instruction set (the same bits on each).
#pragma once

#include <cstdint>

#include "core/vector_isa.h"
#include "nn/kernels/math/block_quant_math.h"

namespace zt::nn::cpu {

// x (count) -> payload (quant_payload_words * 4 bytes: the packed bytes, then 0 up to the
// word) and scales (quant_block_count). T is float, BF16 or F16.
template <typename T>
void quantize_blocks(const T* x, std::int64_t count, const math::BlockQuantFormat& format,
                     std::uint8_t* payload, float* scales, VectorIsa isa = widest_vector_isa());

// payload and scales of `count` elements -> y (count), each element rounded once into T.
template <typename T>
void dequantize_blocks(const std::uint8_t* payload, const float* scales, std::int64_t count,
                       const math::BlockQuantFormat& format, T* y,
                       VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
