// Per-row layer-norm arithmetic shared by the CPU and CUDA kernels: one row of C features is
// normalized to zero mean and unit variance, then scaled and shifted per feature.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// forward:  mean = Σ x / C;  var = Σ (x - mean)^2 / C (biased, as PyTorch);
//           rstd = 1 / sqrt(var + eps);  n = (x - mean) * rstd;  y = n * w + b
// x, y (C); weight, bias (C). Writes the row's mean and rstd for backward.
ZT_HOST_DEVICE void layer_norm_forward_row(const float* x, const float* weight, const float* bias,
                                           std::int64_t channels, float eps, float* y,
                                           float* mean_out, float* rstd_out) {
  float sum = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) sum += x[c];
  const float mean = sum / static_cast<float>(channels);
  float sq_sum = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) {
    const float d = x[c] - mean;
    sq_sum += d * d;
  }
  const float rstd = 1.0f / sqrtf(sq_sum / static_cast<float>(channels) + eps);
  for (std::int64_t c = 0; c < channels; ++c) {
    y[c] = (x[c] - mean) * rstd * weight[c] + bias[c];
  }
  *mean_out = mean;
  *rstd_out = rstd;
}

// backward, with g = dy * w and n the normalized input:
//   dx = rstd * (g - mean(g) - n * mean(g * n))
//   dw += dy * n;  db += dy
// dy, x, dx (C); weight, dweight, dbias (C). dx is written, dweight and dbias accumulated.
ZT_HOST_DEVICE void layer_norm_backward_row(const float* dy, const float* x, const float* weight,
                                            float mean, float rstd, std::int64_t channels,
                                            float* dx, float* dweight, float* dbias) {
  float g_mean = 0.0f;
  float gn_mean = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) {
    const float n = (x[c] - mean) * rstd;
    const float g = dy[c] * weight[c];
    g_mean += g;
    gn_mean += g * n;
  }
  g_mean /= static_cast<float>(channels);
  gn_mean /= static_cast<float>(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    const float n = (x[c] - mean) * rstd;
    const float g = dy[c] * weight[c];
    dx[c] = rstd * (g - g_mean - n * gn_mean);
    dweight[c] += dy[c] * n;
    dbias[c] += dy[c];
  }
}

// The pieces of the two row functions above, for kernels that split a row across threads:
// the row sums (Σ x, Σ (x - mean)^2, Σ g, Σ g n) are reductions done by the caller, the
// arithmetic around them is here.
ZT_HOST_DEVICE float layer_norm_mean(float sum, std::int64_t channels) {
  return sum / static_cast<float>(channels);
}
ZT_HOST_DEVICE float layer_norm_rstd(float sq_dev_sum, std::int64_t channels, float eps) {
  return 1.0f / sqrtf(sq_dev_sum / static_cast<float>(channels) + eps);
}
// n = (x - mean) * rstd
ZT_HOST_DEVICE float layer_norm_normalize(float x, float mean, float rstd) {
  return (x - mean) * rstd;
}
// y = n * w + b
ZT_HOST_DEVICE float layer_norm_output(float x, float mean, float rstd, float weight, float bias) {
  return (x - mean) * rstd * weight + bias;
}
// g = dy * w, the gradient reaching the normalized input.
ZT_HOST_DEVICE float layer_norm_g(float dy, float weight) { return dy * weight; }
// dx = rstd * (g - mean(g) - n * mean(g * n))
ZT_HOST_DEVICE float layer_norm_dx(float g, float n, float rstd, float g_mean, float gn_mean) {
  return rstd * (g - g_mean - n * gn_mean);
}

}  // namespace zt::nn::math
