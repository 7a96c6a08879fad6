// CUDA block-wise int8/int4 quantization (Note [Block quantization format] in
// nn/kernels/math/block_quant_math.h), the same bits as nn/kernels/cpu/block_quant_cpu.h:
//   quantize:   one thread block per quantization block: a NaN-keeping max-reduce of |x|
//               (warp shuffles, then across warps) gives the scale, then each thread packs
//               its elements (int4: its pairs, so no two threads share a byte)
//   dequantize: a grid-stride loop over elements, q * scale rounded once into T
#pragma once

#include <cstdint>

#include "nn/kernels/math/block_quant_math.h"

namespace zt::nn::cuda {

// Device pointers; work is enqueued on `stream` (a cudaStream_t). T is float, BF16 or F16.
// x (count) -> payload (quant_payload_words * 4 bytes, the padding after the packed bytes 0)
// and scales (quant_block_count). count == 0 enqueues nothing.
template <typename T>
void quantize_blocks(const T* x, std::int64_t count, const math::BlockQuantFormat& format,
                     std::uint8_t* payload, float* scales, void* stream);

// payload and scales of `count` elements -> y (count).
template <typename T>
void dequantize_blocks(const std::uint8_t* payload, const float* scales, std::int64_t count,
                       const math::BlockQuantFormat& format, T* y, void* stream);

}  // namespace zt::nn::cuda
