// The row arithmetic of causal scaled-dot-product attention, shared by the CPU and CUDA
// kernels: the online softmax that turns a row of scores into its log-sum-exp, the
// probabilities recomputed from it, and the softmax's backward through D = rowsum(dO ∘ O).
// Query t of a (T, T) score matrix sees keys 0..t only; with a longer key sequence (a KV
// cache, Note [Longer key sequence] in nn/kernels/attention_heads.h) a row's t is its query's
// position among the keys. Where the heads sit in memory is HeadStrides (Note [Attention
// operands]). Every exp is exp_f32 (Note [An exp that vectorizes]), so the CPU's scalar and
// vector loops and CUDA's kernels compute the same exponentials. The CPU's tiled kernel runs
// the online softmax over blocks of a row (nn/kernels/cpu/attention_rows_cpu.cpp).
//
//   forward:  S = scale q k^T                  scale = 1 / sqrt(head_dim)
//             lse_t = log Σ_{j<=t} exp(S_tj)   (one pass: online_softmax_update)
//             P_tj = exp(S_tj - lse_t) for j <= t, 0 after;  O = P v
//   backward: P recomputed from q, k and lse (nothing of size T x T is saved)
//             dv = P^T dO;  dP = dO v^T;  D_t = Σ_d dO_td O_td  (= Σ_j P_tj dP_tj)
//             dS = P ∘ (dP - D);  dq = scale dS k;  dk = scale dS^T q
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "nn/kernels/math/exp_math.h"

namespace zt::nn::math {

// Whether key j is visible from query t (the causal mask).
ZT_HOST_DEVICE bool causal_visible(std::int64_t j, std::int64_t t) { return j <= t; }

// Where the head_dim contiguous elements of head h at position t of batch row b start,
// in elements from the operand's base: offset + b batch + t seq + h head.
struct HeadStrides {
  std::int64_t offset;
  std::int64_t batch;
  std::int64_t seq;
  std::int64_t head;
};
ZT_HOST_DEVICE std::int64_t head_row_start(const HeadStrides& s, std::int64_t b, std::int64_t t,
                                           std::int64_t h) {
  return s.offset + b * s.batch + t * s.seq + h * s.head;
}

// The running statistics of a softmax over scores seen so far: their max and Σ exp(s - max).
// Starts empty ({-inf, 0}); the max is carried so that exp() never overflows.
struct OnlineSoftmax {
  float max;
  float sum;
};
ZT_HOST_DEVICE OnlineSoftmax online_softmax_empty() { return {-INFINITY, 0.0f}; }

// Adds score s:  max' = max(max, s);  sum' = sum exp(max - max') + exp(s - max').
// Returns exp(max - max'), the factor a running Σ p v must be rescaled by (flash attention
// keeps O that way; here it lets a warp's lanes each keep their own statistics).
ZT_HOST_DEVICE float online_softmax_update(OnlineSoftmax& state, float s) {
  const float new_max = s > state.max ? s : state.max;
  const float rescale = exp_f32(state.max - new_max);  // exp(-inf) = 0 for the first score
  state.sum = state.sum * rescale + exp_f32(s - new_max);
  state.max = new_max;
  return rescale;
}

// The statistics of two disjoint sets of scores combined (a lane's with another's).
ZT_HOST_DEVICE OnlineSoftmax online_softmax_merge(OnlineSoftmax a, OnlineSoftmax b) {
  const float max = a.max > b.max ? a.max : b.max;
  if (max == -INFINITY) return a;  // both empty
  return {max, a.sum * exp_f32(a.max - max) + b.sum * exp_f32(b.max - max)};
}

// log Σ exp(s) of the scores seen: max + log(sum). A row always sees its own key, so sum >= 1.
ZT_HOST_DEVICE float online_softmax_lse(OnlineSoftmax state) { return state.max + logf(state.sum); }

// P_tj = exp(S_tj - lse_t) for a visible key, exactly 0 for a masked one (so that later
// tokens contribute nothing, not even NaN * 0, to earlier outputs).
ZT_HOST_DEVICE float attention_probability(float s, float lse, std::int64_t j, std::int64_t t) {
  return causal_visible(j, t) ? exp_f32(s - lse) : 0.0f;
}

// dS_tj = P_tj (dP_tj - D_t), with D_t = Σ_d dO_td O_td of the row (0 for a masked key).
ZT_HOST_DEVICE float attention_score_gradient(float p, float dp, float d) { return p * (dp - d); }

// One row of the forward, in place: scores s (kv_len) of the query at key position t ->
// probabilities; returns lse_t.
ZT_HOST_DEVICE float attention_softmax_row(float* row, std::int64_t t, std::int64_t kv_len) {
  OnlineSoftmax state = online_softmax_empty();
  for (std::int64_t j = 0; causal_visible(j, t); ++j) online_softmax_update(state, row[j]);
  const float lse = online_softmax_lse(state);
  for (std::int64_t j = 0; j < kv_len; ++j) row[j] = attention_probability(row[j], lse, j, t);
  return lse;
}

// D_t = Σ_d dO_td O_td over one row of head_dim elements.
ZT_HOST_DEVICE float attention_output_dot(const float* o, const float* d_o, std::int64_t head_dim) {
  float dot = 0.0f;
  for (std::int64_t d = 0; d < head_dim; ++d) dot += o[d] * d_o[d];
  return dot;
}

// One row of the backward, in place: given P (n) and dP (n) of query t (a whole row or a
// block of it) and its D_t, writes dS.
ZT_HOST_DEVICE void attention_score_gradient_row(const float* p, float* dp, float d,
                                                 std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) dp[j] = attention_score_gradient(p[j], dp[j], d);
}

}  // namespace zt::nn::math
