// CUDA SwiGLU forward/backward on f32 or bf16 storage with fp32 math; a grid-stride loop over
// nn/kernels/math/swiglu_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t). T is
// float or BF16. gate_up rows hold the gate's `hidden` columns, then up's.

// h (rows, hidden) = silu(gate) * up of gate_up (rows, 2 hidden)
template <typename T>
void swiglu_forward(const T* gate_up, std::int64_t rows, std::int64_t hidden, T* h, void* stream);
// d_gate_up (rows, 2 hidden) from gate_up and dh (rows, hidden); d_gate_up may be gate_up.
template <typename T>
void swiglu_backward(const T* gate_up, const T* dh, std::int64_t rows, std::int64_t hidden,
                     T* d_gate_up, void* stream);

}  // namespace zt::nn::cuda
