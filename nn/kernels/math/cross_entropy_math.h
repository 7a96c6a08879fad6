// Per-row softmax cross-entropy arithmetic shared by the CPU and CUDA kernels.
//   p = softmax(z) computed as exp(z - max z) / Σ exp(z - max z) for stability;
//   loss = log Σ exp(z - max z) - (z_t - max z);  dz = (p - onehot(t)) * scale
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// Returns the row's loss and writes dz (C); dz may alias z.
ZT_HOST_DEVICE float softmax_cross_entropy_row(const float* z, std::int64_t classes,
                                               std::int32_t target, float grad_scale, float* dz) {
  float max_z = z[0];
  for (std::int64_t c = 1; c < classes; ++c) max_z = z[c] > max_z ? z[c] : max_z;
  float sum = 0.0f;
  for (std::int64_t c = 0; c < classes; ++c) sum += expf(z[c] - max_z);
  const float log_sum = logf(sum);
  const float loss = log_sum - (z[target] - max_z);
  const float inv_sum = 1.0f / sum;
  for (std::int64_t c = 0; c < classes; ++c) {
    const float p = expf(z[c] - max_z) * inv_sum;
    dz[c] = (p - (c == target ? 1.0f : 0.0f)) * grad_scale;
  }
  return loss;
}

// The pieces of the row function above, for kernels that split a row across threads (the
// max and Σ exp(z - max) are reductions done by the caller).
ZT_HOST_DEVICE float cross_entropy_exp(float z, float max_z) { return expf(z - max_z); }
// loss = log Σ exp(z - max z) - (z_t - max z)
ZT_HOST_DEVICE float cross_entropy_loss(float sum_exp, float z_target, float max_z) {
  return logf(sum_exp) - (z_target - max_z);
}
// dz = (p - onehot(t)) * scale, with p = exp(z - max) / Σ
ZT_HOST_DEVICE float cross_entropy_dlogit(float z, float max_z, float inv_sum, bool is_target,
                                          float grad_scale) {
  const float p = expf(z - max_z) * inv_sum;
  return (p - (is_target ? 1.0f : 0.0f)) * grad_scale;
}

}  // namespace zt::nn::math
