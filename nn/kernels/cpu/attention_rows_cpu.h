// The per-row softmax work of CPU attention's tiles (Note [Tiled attention] in
// attention_cpu.cpp): loops over nn/kernels/math/attention_math.h compiled for each vector
// instruction set (Note [One loop, three instruction sets]), the same bits on every one.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/vector_isa.h"
#include "nn/kernels/math/attention_math.h"
#include "nn/kernels/math/lane_sums_math.h"

namespace zt::nn::cpu {

// The loops take a row's scores kAttentionRowLanes at a time (Note [Softmax sums in lanes] in
// attention_rows_cpu.cpp), the last group read and written whole: a block's row stride must
// be at least attention_row_stride(n), and what lies past n in a row is scratch.
inline constexpr std::int64_t kAttentionRowLanes = math::kSumLanes;
inline std::int64_t attention_row_stride(std::int64_t n) {
  return (n + kAttentionRowLanes - 1) / kAttentionRowLanes * kAttentionRowLanes;
}

// A (rows, n) block of scores (or of probabilities) with row stride ld (at least
// attention_row_stride(n)), whose row i sees its first visible(i) = clamp(diagonal + i, 0, n)
// keys: the causal mask cut to the block (diagonal is 1 + the position of row 0's query less
// the block's first key).
struct ScoreBlock {
  float* data;
  std::int64_t ld;
  std::int64_t rows;
  std::int64_t n;
  std::int64_t diagonal;

  float* row(std::int64_t i) const { return data + i * ld; }
  std::int64_t visible(std::int64_t i) const {
    return std::clamp<std::int64_t>(diagonal + i, 0, n);
  }
};

// The forward's step over one key block: row i's visible scores fold into state[i] (max'
// = max(max, block max), sum' = sum exp(max - max') + Σ exp(s - max')), every score becomes
// p = exp(s - max') (exactly 0 when masked), and row i of o (head_dim elements, row stride
// ld_o), the running Σ p v, is rescaled by exp(max - max'), except while the row has seen no
// finite score: o is then left as it is (the caller writes or adds a P v of zeros into it).
void attention_forward_rows(const ScoreBlock& s, math::OnlineSoftmax* state, float* o,
                            std::int64_t ld_o, std::int64_t head_dim,
                            VectorIsa isa = widest_vector_isa());

// The forward's end: row i of o (rows, head_dim; row stride ld_o) divided by its sum l_i,
// lse[i] = max_i + log l_i.
void attention_forward_finish(const math::OnlineSoftmax* state, std::int64_t rows, float* o,
                              std::int64_t ld_o, std::int64_t head_dim, float* lse,
                              VectorIsa isa = widest_vector_isa());

// The backward's probabilities, in place: P_ij = exp(S_ij - lse_i) for a visible key,
// exactly 0 for a masked one.
void attention_probability_rows(const ScoreBlock& s, const float* lse,
                                VectorIsa isa = widest_vector_isa());

// The backward's D_i = Σ_d dO_id O_id for rows of head_dim elements (row strides ld_o, ld_d_o).
void attention_output_dots(const float* o, std::int64_t ld_o, const float* d_o, std::int64_t ld_d_o,
                           std::int64_t rows, std::int64_t head_dim, float* d,
                           VectorIsa isa = widest_vector_isa());

// The backward's score gradients, in place over dp: dS_ij = P_ij (dP_ij - D_i) for the
// (rows, n) blocks p and dp, both of row stride ld.
void attention_score_gradient_rows(const float* p, float* dp, std::int64_t ld, std::int64_t rows,
                                   std::int64_t n, const float* d,
                                   VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
