// Dropout on the attention probabilities (nanoGPT's attn_dropout), shared by the CPU and CUDA
// attention kernels: which P(b, h, i, j) a training step keeps, and the forward's and the
// backward's arithmetic on a row of P with that mask applied.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "nn/kernels/math/attention_math.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn::math {

// Note [Attention dropout]
// In a training forward the probabilities are dropped after their softmax is normalized, as
// PyTorch's scaled_dot_product_attention and FlashAttention do: lse (and the online softmax's
// running max and sum) are those of the undropped scores, and
//   P = softmax(S);  Pd = P ∘ Z;  O = Pd V,   Z_ij = 1 / (1 - p) where kept, else 0.
// P(b, h, i, j) (batch row b, query head h, query i, key j of a T-token sample) is element
// attention_dropout_index(h, i, j, T) = (h T + i) T + j of sample b's row in the
// kAttentionProbs stream of its layer (Note [Dropout masks from a hash]): a pure function of
// its coordinates, so the CPU's tiles and CUDA's rows keep the same elements, and the backward
// regenerates forward's mask instead of storing a (B, nh, T, T) one. The backward is
// FlashAttention-2's with dropout:
//   dV = Pd^T dO;  dPd = dO V^T;  dP = dPd ∘ Z;  dS = P ∘ (dP - D)
// with D_i = Σ_j P_ij dP_ij = Σ_j Pd_ij dPd_ij = dO_i · (Σ_j Pd_ij V_j) = dO_i · O_i: D stays
// rowsum(dO ∘ O) with O the dropped output forward wrote, and dS takes the undropped P.
// Training's attention only: keys and queries are the same T positions.

// The element of sample b's mask row that P(b, head, query, key) is.
ZT_HOST_DEVICE std::int64_t attention_dropout_index(std::int64_t head, std::int64_t query,
                                                    std::int64_t key, std::int64_t seq_len) {
  return (head * seq_len + query) * seq_len + key;
}

// The mask of one (batch row, query head): P(query, key) is kept where element
// attention_dropout_index(head, query, key, seq_len) of `row` (dropout_row of the batch row's
// sample) is.
struct AttentionDropoutHead {
  std::uint64_t row;
  std::int64_t head;
  std::int64_t seq_len;
  std::uint32_t threshold;
  float scale;  // 1 / (1 - p)

  ZT_HOST_DEVICE bool keep(std::int64_t query, std::int64_t key) const {
    return dropout_keep(row, attention_dropout_index(head, query, key, seq_len), threshold);
  }
  // The hash state of P(query, key); key + 1's is dropout_next_counter of it.
  ZT_HOST_DEVICE std::uint64_t counter(std::int64_t query, std::int64_t key) const {
    return dropout_counter(row, attention_dropout_index(head, query, key, seq_len));
  }
};

// The mask of batch row b (of the micro-batch `mask` describes) and query head `head`.
ZT_HOST_DEVICE AttentionDropoutHead attention_dropout_head(const DropoutMask& mask, std::int64_t b,
                                                           std::int64_t head,
                                                           std::int64_t seq_len) {
  return {dropout_row(mask.stream, mask.first_sample + b), head, seq_len, mask.threshold,
          mask.scale};
}

// The forward, in place over n probabilities of query `query` from key `first_key` on:
// P -> Pd = P ∘ Z. The row loops step the hash state by an add (dropout_next_counter), which
// keeps a vectorized loop to splitmix64's two multiplies an element (Note [Vector dropout
// masks] in nn/kernels/cpu/attention_dropout_cpu.cpp).
ZT_HOST_DEVICE void attention_dropout_row(const AttentionDropoutHead& mask, std::int64_t query,
                                          std::int64_t first_key, float* p, std::int64_t n) {
  std::uint64_t counter = mask.counter(query, first_key);
  for (std::int64_t j = 0; j < n; ++j) {
    p[j] = dropout_apply(p[j], dropout_keep_counter(counter, mask.threshold), mask.scale);
    counter = dropout_next_counter(counter);
  }
}

// One element of the backward: given P, dPd and the row's D, returns dS = P (Z dPd - D) and
// turns p into Pd = P Z (what dV = Pd^T dO reads).
ZT_HOST_DEVICE float attention_dropout_score_gradient(float& p, float dpd, float d, bool keep,
                                                      float scale) {
  const float ds = attention_score_gradient(p, dropout_apply(dpd, keep, scale), d);
  p = dropout_apply(p, keep, scale);
  return ds;
}

// The backward over n elements of query `query` from key `first_key` on, in place: dp holds
// dPd and becomes dS; p holds P and becomes Pd.
ZT_HOST_DEVICE void attention_dropout_score_gradient_row(const AttentionDropoutHead& mask,
                                                         std::int64_t query, std::int64_t first_key,
                                                         float* p, float* dp, float d,
                                                         std::int64_t n) {
  std::uint64_t counter = mask.counter(query, first_key);
  for (std::int64_t j = 0; j < n; ++j) {
    dp[j] = attention_dropout_score_gradient(
        p[j], dp[j], d, dropout_keep_counter(counter, mask.threshold), mask.scale);
    counter = dropout_next_counter(counter);
  }
}

}  // namespace zt::nn::math
