// CUDA RMSNorm forward/backward on f32 or bf16 storage with fp32 math; thin kernels over
// nn/kernels/math/rms_norm_math.h (one warp per row).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t).
// T is float or BF16. rstd and the weight gradient are always fp32.

// x, y (rows, C); weight (C); rstd (rows), written for backward.
template <typename T>
void rms_norm_forward(const T* x, const T* weight, std::int64_t rows, std::int64_t channels,
                      float eps, T* y, float* rstd, void* stream);

// dy, x, dx (rows, C); weight (C); rstd (rows) from forward. dx is written (it may alias dy);
// dweight (C) is accumulated (+=) with fp32 atomicAdd, so its summation order, and hence its
// last bits, vary from run to run.
template <typename T>
void rms_norm_backward(const T* dy, const T* x, const T* weight, const float* rstd,
                       std::int64_t rows, std::int64_t channels, T* dx, float* dweight,
                       void* stream);

}  // namespace zt::nn::cuda
