// The CUDA kernels behind CudaDeviceOps, over raw device pointers, launched on `stream` (a
// cudaStream_t). Private to core/device/cuda: only cuda_device_ops.cpp includes it.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::cuda_kernels {

void fill(void* values, DType dtype, std::int64_t n, float value, void* stream);
void scale(void* values, DType dtype, std::int64_t n, float factor, void* stream);
void axpby(float alpha, const void* x, DType x_dtype, float beta, void* y, DType y_dtype,
           std::int64_t n, void* stream);
void cast(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::int64_t n,
          void* stream);

// Σ values² is computed by sum_of_squares_blocks(n) blocks, each writing the double sum of
// its fixed share of the elements to partials[block]; the caller adds the partials in block
// order. The grid depends on n only, so the result is the same on every call and GPU.
inline constexpr int kMaxSumOfSquaresBlocks = 1024;
int sum_of_squares_blocks(std::int64_t n);
void sum_of_squares_partials(const void* values, DType dtype, std::int64_t n, double* partials,
                             void* stream);
// *sum = partials[0] + ... + partials[blocks - 1], in block order, on the device.
void sum_partials(const double* partials, int blocks, double* sum, void* stream);

}  // namespace zt::cuda_kernels
