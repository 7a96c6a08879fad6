// Launch geometry shared by the nn CUDA kernels: block sizes, grid sizes for grid-stride
// loops, and the launch check. Private to nn/kernels/cuda; included only by its .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "nn/kernels/cuda/cuda_check.h"

namespace zt::nn::cuda::detail {

inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kWarpSize = 32;
inline constexpr int kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
// Grid-stride loops cover any n; more blocks than this only adds scheduling overhead.
inline constexpr std::int64_t kMaxBlocks = 65535;

inline int blocks_for(std::int64_t work_items, std::int64_t items_per_block) {
  const std::int64_t blocks = (work_items + items_per_block - 1) / items_per_block;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Launch errors (bad configuration, no device) surface here; errors inside a kernel
// surface at the next synchronizing call.
inline void check_launch(const char* kernel, const std::string& shape) {
  check_cuda(cudaGetLastError(), kernel, std::string("launch, ") + shape);
}

// Grid-stride index helpers, in 64 bits so that n may exceed 2^31.
__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() {
  return std::int64_t{gridDim.x} * blockDim.x;
}

// Warp-per-row kernels (layer norm, RMSNorm): the thread's lane in its warp, its warp's index
// in the grid, and the grid's warp count (the row stride of a warp-stride loop).
__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
__device__ __forceinline__ std::int64_t warp_id() { return global_thread() / kWarpSize; }
__device__ __forceinline__ std::int64_t warp_count() { return grid_threads() / kWarpSize; }

}  // namespace zt::nn::cuda::detail
