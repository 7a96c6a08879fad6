// CUDA token + position embedding forward/backward on f32 or bf16 tables with fp32 math;
// thin kernels over nn/kernels/math/embedding_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t).
// ids (N) with N = B * T tokens, token i at position i % seq_len; wte (vocab, C);
// wpe (seq_len, C). An id outside [0, vocab) traps the kernel instead of reading out of
// bounds (the stream then reports an error). T is float or BF16. wpe and dwpe may be null:
// a token embedding only.

// out (N, C) = wte[ids] + wpe[position]
template <typename T>
void embedding_forward(const std::int32_t* ids, const T* wte, const T* wpe, std::int64_t tokens,
                       std::int64_t seq_len, std::int64_t channels, std::int64_t vocab, T* out,
                       void* stream);

// dwte[ids] += dout;  dwpe[position] += dout;  dout (N, C), dwte (vocab, C), dwpe (seq_len, C)
// in fp32. A scatter-add with fp32 atomicAdd: a token seen twice gets both updates, in an
// order (and so with last bits) that varies from run to run.
template <typename T>
void embedding_backward(const std::int32_t* ids, const T* dout, std::int64_t tokens,
                        std::int64_t seq_len, std::int64_t channels, std::int64_t vocab,
                        float* dwte, float* dwpe, void* stream);

}  // namespace zt::nn::cuda
