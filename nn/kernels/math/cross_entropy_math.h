// Per-row softmax cross-entropy arithmetic shared by the CPU and CUDA kernels.
//   p = softmax(z) computed as exp(z - max z) / Σ exp(z - max z) for stability;
//   loss = log Σ exp(z - max z) - (z_t - max z);  dz = (p - onehot(t)) * scale
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "nn/kernels/math/exp_math.h"
#include "nn/kernels/math/lane_sums_math.h"

namespace zt::nn::math {

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

// Returns the row's loss and writes dz (C); dz may alias z. The max and Σ exp are sums in
// lanes (Note [Sums in lanes]), so that the CPU's loop over a row vectorizes with the same bits
// on every instruction set (nn/kernels/cpu/cross_entropy_cpu.cpp).
ZT_HOST_DEVICE float softmax_cross_entropy_row(const float* z, std::int64_t classes,
                                               std::int32_t target, float grad_scale, float* dz) {
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
  return loss;
}

}  // namespace zt::nn::math
