// CUDA activation kernels (ReLU, GELU) on f32 or bf16 storage with fp32 math; thin loops
// over nn/kernels/math/activation_math.h and gelu_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t, nullptr
// for the default stream). T is float or BF16; dx may alias dy, y may alias x.

// y (n) = relu(x (n))
template <typename T>
void relu_forward(const T* x, T* y, std::int64_t n, void* stream);
// dx (n) = relu'(x) * dy
template <typename T>
void relu_backward(const T* x, const T* dy, T* dx, std::int64_t n, void* stream);

// y (n) = gelu(x (n)), tanh approximation
template <typename T>
void gelu_forward(const T* x, T* y, std::int64_t n, void* stream);
// dx (n) = gelu'(x) * dy
template <typename T>
void gelu_backward(const T* x, const T* dy, T* dx, std::int64_t n, void* stream);

}  // namespace zt::nn::cuda
