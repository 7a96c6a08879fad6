// Per-row RMSNorm arithmetic shared by the CPU and CUDA kernels (Llama's norm): one row of C
// features is scaled to unit root mean square, then scaled per feature. No mean is
// subtracted and there is no bias.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// forward:  rstd = 1 / sqrt(Σ x^2 / C + eps);  n = x * rstd;  y = n * w
// backward, with g = dy * w:
//   dL/dx_j = rstd g_j + Σ_c g_c x_c d(rstd)/dx_j,  d(rstd)/dx_j = -rstd^3 x_j / C
//   dx = rstd * (g - n * mean(g * n));  dw += dy * n
// (LayerNorm's backward without the mean(g) term, since no mean was subtracted.)

// rstd from the row's Σ x^2.
ZT_HOST_DEVICE float rms_norm_rstd(float sq_sum, std::int64_t channels, float eps) {
  return 1.0f / sqrtf(sq_sum / static_cast<float>(channels) + eps);
}
// y = x * rstd * w
ZT_HOST_DEVICE float rms_norm_output(float x, float rstd, float weight) {
  return x * rstd * weight;
}
// dx = rstd * (g - n * mean(g * n)), g = dy * w, n = x * rstd
ZT_HOST_DEVICE float rms_norm_dx(float g, float n, float rstd, float gn_mean) {
  return rstd * (g - n * gn_mean);
}

// x, y (C); weight (C). Writes the row's rstd for backward.
ZT_HOST_DEVICE void rms_norm_forward_row(const float* x, const float* weight, std::int64_t channels,
                                         float eps, float* y, float* rstd_out) {
  float sq_sum = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) sq_sum += x[c] * x[c];
  const float rstd = rms_norm_rstd(sq_sum, channels, eps);
  for (std::int64_t c = 0; c < channels; ++c) y[c] = rms_norm_output(x[c], rstd, weight[c]);
  *rstd_out = rstd;
}

// dy, x, dx (C); weight, dweight (C). dx is written (it may alias dy: each dx[c] is written
// after the row sum and from dy[c] alone), dweight accumulated.
ZT_HOST_DEVICE void rms_norm_backward_row(const float* dy, const float* x, const float* weight,
                                          float rstd, std::int64_t channels, float* dx,
                                          float* dweight) {
  float gn_sum = 0.0f;
  for (std::int64_t c = 0; c < channels; ++c) gn_sum += dy[c] * weight[c] * (x[c] * rstd);
  const float gn_mean = gn_sum / static_cast<float>(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    const float d = dy[c];
    const float n = x[c] * rstd;
    dx[c] = rms_norm_dx(d * weight[c], n, rstd, gn_mean);
    dweight[c] += d * n;
  }
}

}  // namespace zt::nn::math
