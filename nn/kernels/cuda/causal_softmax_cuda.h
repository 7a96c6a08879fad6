// CUDA causal softmax rows of self-attention (forward/backward, in place) on f32 or bf16
// storage with fp32 math; thin kernels over nn/kernels/math/attention_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t).
// The score matrix is (rows, T) with rows = B * heads * T; row r is query t = r % T and
// sees keys 0..t. T is float or BF16.

// In place: scores (rows, T) -> probabilities, exactly 0 past the diagonal.
template <typename T>
void causal_softmax_forward(T* scores, std::int64_t rows, std::int64_t seq_len, void* stream);

// In place: given probabilities p (rows, T) and dp = dL/dp (rows, T), writes dL/ds into dp.
template <typename T>
void causal_softmax_backward(const T* p, T* dp, std::int64_t rows, std::int64_t seq_len,
                             void* stream);

}  // namespace zt::nn::cuda
