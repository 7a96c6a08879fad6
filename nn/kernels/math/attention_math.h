// Per-row causal softmax arithmetic of self-attention, shared by the CPU and CUDA kernels.
// A row t of the (T, T) score matrix attends to keys 0..t only.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// forward, in place on one row of scores s (T) at query position t:
//   p[j] = exp(s[j] - max_{k<=t} s[k]) / Σ_{k<=t} exp(s[k] - max)  for j <= t;  p[j] = 0 after
// Subtracting the max keeps exp() from overflowing; the masked tail is exactly zero so that
// later tokens contribute nothing (not even NaN * 0) to earlier outputs.
ZT_HOST_DEVICE void causal_softmax_row(float* row, std::int64_t t, std::int64_t seq_len) {
  float max_s = row[0];
  for (std::int64_t j = 1; j <= t; ++j) max_s = row[j] > max_s ? row[j] : max_s;
  float sum = 0.0f;
  for (std::int64_t j = 0; j <= t; ++j) {
    row[j] = expf(row[j] - max_s);
    sum += row[j];
  }
  const float inv_sum = 1.0f / sum;
  for (std::int64_t j = 0; j <= t; ++j) row[j] *= inv_sum;
  for (std::int64_t j = t + 1; j < seq_len; ++j) row[j] = 0.0f;
}

// backward, in place: given p (T) and dp (T) = dL/dp, writes dL/ds into dp:
//   ds[j] = p[j] (dp[j] - Σ_{k<=t} p[k] dp[k])  for j <= t;  ds[j] = 0 after
ZT_HOST_DEVICE void causal_softmax_backward_row(const float* p, float* dp, std::int64_t t,
                                                std::int64_t seq_len) {
  float dot = 0.0f;
  for (std::int64_t j = 0; j <= t; ++j) dot += p[j] * dp[j];
  for (std::int64_t j = 0; j <= t; ++j) dp[j] = p[j] * (dp[j] - dot);
  for (std::int64_t j = t + 1; j < seq_len; ++j) dp[j] = 0.0f;
}

// The pieces of the two row functions above, for kernels that split a row across threads
// (the max, the sum of exps and the dot product are reductions done by the caller):
// forward p[j] = causal_softmax_exp(s[j], max) / Σ;  backward ds[j] = p[j] (dp[j] - dot).
ZT_HOST_DEVICE float causal_softmax_exp(float s, float max_s) { return expf(s - max_s); }
ZT_HOST_DEVICE float causal_softmax_backward_element(float p, float dp, float dot) {
  return p * (dp - dot);
}
// Whether key j is visible from query t (the causal mask).
ZT_HOST_DEVICE bool causal_visible(std::int64_t j, std::int64_t t) { return j <= t; }

}  // namespace zt::nn::math
