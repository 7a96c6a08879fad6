// CUDA Linear-bias forward and backward on f32 or bf16 storage with fp32 math; thin kernels
// over nn/kernels/math/bias_residual_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t, nullptr
// for the default stream). T is float or BF16. Empty shapes (rows or cols 0) enqueue nothing.

// y (rows, cols) += bias (cols) broadcast over rows, in place; computed in fp32 and rounded
// once to T.
template <typename T>
void bias_add_forward(T* y, const T* bias, std::int64_t rows, std::int64_t cols, void* stream);

// dbias (cols) += Σ_r dy (rows, cols)[r, :], in fp32. Deterministic: each column is summed
// in an order fixed by compile-time constants (no atomics), so the bits are the same on
// every run and every device. dbias must not overlap dy.
template <typename T>
void bias_backward(const T* dy, float* dbias, std::int64_t rows, std::int64_t cols, void* stream);

}  // namespace zt::nn::cuda
