// CUDA block quantization: thin loops over nn/kernels/math/block_quant_math.h, so each
// element's bits are the CPU kernel's.
#include <cuda_runtime.h>

#include <string>

#include "nn/kernels/cuda/block_quant_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;
using detail::kThreadsPerBlock;
using detail::kWarpSize;
using detail::kWarpsPerBlock;

// The bits of max |x| over the block's threads (quant_abs_max: integer max, so NaN wins and
// the order cannot matter); every thread gets them. `scratch`: kWarpsPerBlock words.
__device__ std::uint32_t block_abs_max(std::uint32_t value, std::uint32_t* scratch) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = math::quant_abs_max(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < kWarpsPerBlock ? scratch[lane] : 0u;
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = math::quant_abs_max(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  return value;
}

// Blocks of quantization in a block-stride loop (gridDim.x <= kMaxBlocks); the last thread
// block to hold the last quantization block also zeroes the payload's padding bytes.
template <typename T>
__global__ void quantize_kernel(const T* x, std::int64_t count, std::int64_t block_elements,
                                math::QuantBits bits, std::uint8_t* payload, float* scales,
                                std::int64_t payload_bytes, std::int64_t padded_bytes) {
  __shared__ std::uint32_t scratch[kWarpsPerBlock];
  const std::int64_t blocks = math::quant_block_count(count, block_elements);
  const std::int64_t block_bytes = math::quant_block_bytes(block_elements, bits);
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const T* xb = x + b * block_elements;
    const std::int64_t rest = count - b * block_elements;
    const std::int64_t n = rest < block_elements ? rest : block_elements;
    std::uint32_t abs_max = 0;
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      abs_max = math::quant_abs_max(abs_max, math::quant_abs_bits(static_cast<float>(xb[i])));
    }
    const float scale = math::quant_scale(block_abs_max(abs_max, scratch), bits);
    if (threadIdx.x == 0) scales[b] = scale;
    std::uint8_t* pb = payload + b * block_bytes;
    if (bits == math::QuantBits::kInt8) {
      for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        pb[i] =
            static_cast<std::uint8_t>(math::quantize_value(static_cast<float>(xb[i]), scale, bits));
      }
    } else {
      for (std::int64_t j = threadIdx.x; 2 * j < n; j += blockDim.x) {
        const int low = math::quantize_value(static_cast<float>(xb[2 * j]), scale, bits);
        const int high = 2 * j + 1 < n
                             ? math::quantize_value(static_cast<float>(xb[2 * j + 1]), scale, bits)
                             : 0;
        pb[j] = math::pack_int4(low, high);
      }
    }
    if (b == blocks - 1) {
      for (std::int64_t i = payload_bytes + threadIdx.x; i < padded_bytes; i += blockDim.x) {
        payload[i] = 0;
      }
    }
  }
}

template <typename T>
__global__ void dequantize_kernel(const std::uint8_t* payload, const float* scales,
                                  std::int64_t count, std::int64_t block_elements,
                                  math::QuantBits bits, T* y) {
  const std::int64_t block_bytes = math::quant_block_bytes(block_elements, bits);
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const std::int64_t b = i / block_elements;
    y[i] = T(math::dequantize_element(payload + b * block_bytes, i - b * block_elements, scales[b],
                                      bits));
  }
}

std::string shape_of(std::int64_t count, const math::BlockQuantFormat& format) {
  return std::to_string(count) + " elements, int" + std::to_string(static_cast<int>(format.bits)) +
         " blocks of " + std::to_string(format.block_elements);
}

}  // namespace

template <typename T>
void quantize_blocks(const T* x, std::int64_t count, const math::BlockQuantFormat& format,
                     std::uint8_t* payload, float* scales, void* stream) {
  if (count == 0) return;
  const std::int64_t blocks = math::quant_block_count(count, format.block_elements);
  const int grid = detail::blocks_for(blocks, 1);
  quantize_kernel<T><<<grid, kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      x, count, format.block_elements, format.bits, payload, scales,
      math::quant_payload_bytes(count, format), 4 * math::quant_payload_words(count, format));
  detail::check_launch("quantize_kernel", shape_of(count, format));
}

template <typename T>
void dequantize_blocks(const std::uint8_t* payload, const float* scales, std::int64_t count,
                       const math::BlockQuantFormat& format, T* y, void* stream) {
  if (count == 0) return;
  const int grid = detail::blocks_for(count, kThreadsPerBlock);
  dequantize_kernel<T><<<grid, kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      payload, scales, count, format.block_elements, format.bits, y);
  detail::check_launch("dequantize_kernel", shape_of(count, format));
}

#define ZT_INSTANTIATE(T)                                                                 \
  template void quantize_blocks<T>(const T*, std::int64_t, const math::BlockQuantFormat&, \
                                   std::uint8_t*, float*, void*);                         \
  template void dequantize_blocks<T>(const std::uint8_t*, const float*, std::int64_t,     \
                                     const math::BlockQuantFormat&, T*, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
ZT_INSTANTIATE(F16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
