// The row kernels of CUDA attention between its GEMMs, in f32: the softmax that writes the
// log-sum-exp, the probabilities recomputed from it, D = rowsum(dO ∘ O) and dS; thin loops
// over nn/kernels/math/attention_math.h.
#pragma once

#include <cstdint>

#include "nn/kernels/math/attention_math.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn::cuda {

// All pointers are device pointers; work is enqueued on `stream` (a cudaStream_t). A score
// matrix is (rows, T) with rows = B * heads * T; row r is query t = r % T and sees keys
// 0..t. P is exactly 0 past the diagonal.

// In place: scores (rows, T_kv) -> P; lse (rows) = log Σ_{j<=t} exp(S_j) is written. Row r is
// query r % T (T = query_len), at key position t = T_kv - T + r % T (Note [Longer key
// sequence]; T_kv == T in training).
void attention_softmax_forward(float* scores, float* lse, std::int64_t rows, std::int64_t query_len,
                               std::int64_t kv_len, void* stream);

// In place: scores (rows, T) -> P = exp(S - lse) (the backward's recomputation).
void attention_probabilities(float* scores, const float* lse, std::int64_t rows,
                             std::int64_t seq_len, void* stream);

// d (B, n_head, T) = Σ_d dO ∘ O over each row of strided heads o and d_o (B, T, n_head, hs).
void attention_output_dot(const float* o, math::HeadStrides o_strides, const float* d_o,
                          math::HeadStrides d_o_strides, std::int64_t batch, std::int64_t n_head,
                          std::int64_t seq_len, std::int64_t head_dim, float* d, void* stream);

// In place: given P (rows, T), dP (rows, T) and d (rows), writes dS = P ∘ (dP - d) into dp.
void attention_score_gradient(const float* p, float* dp, const float* d, std::int64_t rows,
                              std::int64_t seq_len, void* stream);

// Dropout on the probabilities (Note [Attention dropout] in attention_dropout_math.h), over
// training's (rows, T) matrices, rows = B * n_head * T, row r = (b n_head + h) T + i.
// Forward, in place: P -> P ∘ Z.
void attention_dropout_forward(float* p, const math::DropoutMask& mask, std::int64_t batch,
                               std::int64_t n_head, std::int64_t seq_len, void* stream);
// Backward, in place: given P in p and dPd = dO V^T in dp, writes dS = P ∘ (Z dPd - d) into dp
// and P ∘ Z into p.
void attention_dropout_score_gradient(float* p, float* dp, const float* d,
                                      const math::DropoutMask& mask, std::int64_t batch,
                                      std::int64_t n_head, std::int64_t seq_len, void* stream);

}  // namespace zt::nn::cuda
