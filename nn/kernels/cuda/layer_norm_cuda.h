// CUDA layer norm forward/backward on f32 or bf16 storage with fp32 math; thin kernels over
// nn/kernels/math/layer_norm_math.h (one warp per row).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t).
// T is float or BF16. Statistics and parameter gradients are always fp32.

// x, y (rows, C); weight, bias (C); mean, rstd (rows), written for backward.
template <typename T>
void layer_norm_forward(const T* x, const T* weight, const T* bias, std::int64_t rows,
                        std::int64_t channels, float eps, T* y, float* mean, float* rstd,
                        void* stream);

// dy, x, dx (rows, C); weight (C); mean, rstd (rows) from forward. dx is written (it may
// alias dy); dweight, dbias (C) are accumulated (+=) with fp32 atomicAdd, so their summation
// order, and hence their last bits, vary from run to run.
template <typename T>
void layer_norm_backward(const T* dy, const T* x, const T* weight, const float* mean,
                         const float* rstd, std::int64_t rows, std::int64_t channels, T* dx,
                         float* dweight, float* dbias, void* stream);

}  // namespace zt::nn::cuda
