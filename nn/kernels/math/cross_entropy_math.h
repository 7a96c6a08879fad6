// Per-row softmax cross-entropy arithmetic shared by the CPU and CUDA kernels.
//   p = softmax(z) computed as exp(z - max z) / Σ exp(z - max z) for stability;
//   loss = log Σ exp(z - max z) - (z_t - max z);  dz = (p - onehot(t)) * scale
// over the row's first `classes` logits; the padded columns after them (up to `columns`) take
// no part (Note [Padded vocabulary]).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "nn/kernels/math/exp_math.h"
#include "nn/kernels/math/lane_sums_math.h"

namespace zt::nn::math {

// Note [Padded vocabulary]
// A language model's vocabulary is often padded past the data's (model.vocab_size 50304 for
// GPT-2's 50257 tokens, so that the classifier's GEMM tiles evenly; or a Hugging Face model
// loaded with a larger model.vocab_size, its extra rows zero). The padded rows are no tokens:
// as llm.c's classifier (its softmax over V, its rows of Vp), the softmax spans the data's
// `classes` only, so a padded logit gets no probability mass and its gradient is exactly 0,
// and the loss equals the unpadded model's. Sampling never draws one either
// (runtime/generate/token_sampler.h). The data's vocabulary is model.data_vocab_size, or what
// the runtime resolves it to (runtime/engine/data_vocabulary.h).

// The pieces of the row function below, for kernels that split a row across threads (the
// max and Σ exp(z - max) are reductions done by the caller). exp is exp_f32 (Note [An exp that
// vectorizes]), on CUDA as on the CPU.
ZT_HOST_DEVICE float cross_entropy_exp(float z, float max_z) { return exp_f32(z - max_z); }
// loss = log Σ exp(z - max z) - (z_t - max z)
ZT_HOST_DEVICE float cross_entropy_loss(float sum_exp, float z_target, float max_z) {
  return logf(sum_exp) - (z_target - max_z);
}
// dz = (p - onehot(t)) * scale, with p = exp(z - max) / Σ
ZT_HOST_DEVICE float cross_entropy_dlogit(float z, float max_z, float inv_sum, bool is_target,
                                          float grad_scale) {
  const float p = exp_f32(z - max_z) * inv_sum;
  return (p - (is_target ? 1.0f : 0.0f)) * grad_scale;
}

// Returns the row's loss over z's first `classes` logits and writes dz (columns): the softmax's
// gradient there, 0 in the padded columns [classes, columns) (Note [Padded vocabulary]); dz may
// alias z. The max and Σ exp are sums in lanes (Note [Sums in lanes]), so that the CPU's loop
// over a row vectorizes with the same bits on every instruction set
// (nn/kernels/cpu/cross_entropy_cpu.cpp).
ZT_HOST_DEVICE float softmax_cross_entropy_row(const float* z, std::int64_t classes,
                                               std::int64_t columns, std::int32_t target,
                                               float grad_scale, float* dz) {
  float lanes[kSumLanes];
  for (std::int64_t l = 0; l < kSumLanes; ++l) lanes[l] = -INFINITY;
  std::int64_t c0 = 0;
  for (; c0 + kSumLanes <= classes; c0 += kSumLanes) {
    for (std::int64_t l = 0; l < kSumLanes; ++l) lanes[l] = larger(z[c0 + l], lanes[l]);
  }
  for (std::int64_t l = 0; c0 + l < classes; ++l) lanes[l] = larger(z[c0 + l], lanes[l]);
  const float max_z = max_of_lanes(lanes);
  for (std::int64_t l = 0; l < kSumLanes; ++l) lanes[l] = 0.0f;
  for (c0 = 0; c0 + kSumLanes <= classes; c0 += kSumLanes) {
    for (std::int64_t l = 0; l < kSumLanes; ++l) lanes[l] += cross_entropy_exp(z[c0 + l], max_z);
  }
  for (std::int64_t l = 0; c0 + l < classes; ++l) lanes[l] += cross_entropy_exp(z[c0 + l], max_z);
  const float sum = sum_of_lanes(lanes);
  const float loss = cross_entropy_loss(sum, z[target], max_z);
  const float inv_sum = 1.0f / sum;
  for (std::int64_t c = 0; c < classes; ++c) {
    dz[c] = cross_entropy_dlogit(z[c], max_z, inv_sum, c == target, grad_scale);
  }
  for (std::int64_t c = classes; c < columns; ++c) dz[c] = 0.0f;
  return loss;
}

}  // namespace zt::nn::math
