// CUDA residual sums on f32 or bf16 storage with fp32 math, rounded once; thin loops over
// nn/kernels/math/bias_residual_math.h.
//   forward:  y = x + m(x)             residual_add(x, branch, y)
//   backward: dx = dy + m.backward(dy)   the branch's dx, when it is a buffer the Residual
//                                        owns: add_into(branch_dx, dy); otherwise
//                                        residual_add(dy, branch_dx, dx) into a new buffer
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t, nullptr
// for the default stream). T is float or BF16. n == 0 enqueues nothing.

// y (n) = x (n) + branch (n). y may alias x or branch (each element is read before it is
// written, by the same thread); any other overlap is undefined.
template <typename T>
void residual_add(const T* x, const T* branch, T* y, std::int64_t n, void* stream);

// dst (n) += src (n). src may equal dst (doubling it); any other overlap is undefined.
template <typename T>
void add_into(T* dst, const T* src, std::int64_t n, void* stream);

}  // namespace zt::nn::cuda
