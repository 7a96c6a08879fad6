// Warp and block reductions (sum, max) in fp32 for the row kernels. Private to
// nn/kernels/cuda; included only by its .cu files.
#pragma once

#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"

namespace zt::nn::cuda::detail {

// Butterfly reductions: every lane ends with the full result.
__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  }
  return value;
}

__device__ __forceinline__ float warp_max(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  return value;
}

// Block reductions for blocks of kThreadsPerBlock threads; every thread gets the result.
// `scratch` holds kWarpsPerBlock floats of shared memory. The leading __syncthreads lets a
// caller reuse one scratch array for consecutive reductions.
template <bool kMax>
__device__ __forceinline__ float block_reduce(float value, float* scratch) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  value = kMax ? warp_max(value) : warp_sum(value);
  __syncthreads();
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < kWarpsPerBlock ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
  return kMax ? warp_max(value) : warp_sum(value);
}

__device__ __forceinline__ float block_sum(float value, float* scratch) {
  return block_reduce<false>(value, scratch);
}
__device__ __forceinline__ float block_max(float value, float* scratch) {
  return block_reduce<true>(value, scratch);
}

}  // namespace zt::nn::cuda::detail
