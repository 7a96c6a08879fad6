// Per-row layer-norm arithmetic shared by the CPU and CUDA kernels: one row of C features is
// normalized to zero mean and unit variance, then scaled and shifted per feature.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// Note [LayerNorm's row sums]
// A row's sums (Σ x, Σ (x - mean)^2, Σ g, Σ g n) are taken in one fixed order, so that the CPU
// paths for every vector width (Note [One loop, three instruction sets]) and the scalar
// reference give the same bits: kLayerNormLanes partial sums, lane i adding elements i,
// i + 16, i + 32, ... in turn (the last, partial group into the first lanes), then the lanes
// folded pairwise (lane i += lane i + 8, then + 4, + 2, + 1). Sixteen lanes are one AVX-512
// register, two AVX2 ones, four SSE ones: each width adds the same lanes in the same order,
// and 16 short chains lose less precision than one long one. (The CUDA kernel sums by warp
// lanes instead; its tests compare with a tolerance.)
constexpr std::int64_t kLayerNormLanes = 16;

// Marks a loop over the lanes as one to keep: unrolled, its sixteen sums become sixteen scalar
// chains that GCC then vectorizes across the outer loop with a 16 x 16 transpose per step;
// kept, it is one vector add per step (a lane loop is never in CUDA code).
#if defined(__CUDACC__)
#define ZT_LANE_LOOP
#else
#define ZT_LANE_LOOP _Pragma("GCC unroll 1")
#endif

// Σ of the lanes, folded pairwise; the lanes are overwritten.
ZT_HOST_DEVICE float layer_norm_fold_lanes(float (&lanes)[kLayerNormLanes]) {
  for (std::int64_t width = kLayerNormLanes / 2; width > 0; width /= 2) {
    for (std::int64_t i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  }
  return lanes[0];
}

// The mean of the row's elements, x (C).
ZT_HOST_DEVICE float layer_norm_row_mean(const float* x, std::int64_t channels) {
  const std::int64_t whole = channels - channels % kLayerNormLanes;
  float lanes[kLayerNormLanes] = {};
  for (std::int64_t c = 0; c < whole; c += kLayerNormLanes) {
    ZT_LANE_LOOP
    for (std::int64_t i = 0; i < kLayerNormLanes; ++i) lanes[i] += x[c + i];
  }
  for (std::int64_t i = 0; whole + i < channels; ++i) lanes[i] += x[whole + i];
  return layer_norm_fold_lanes(lanes) / static_cast<float>(channels);
}

// 1 / sqrt(Σ (x - mean)^2 / C + eps) of the row x (C): two passes, as Σ (x - mean)^2 keeps
// the precision that Σ x^2 - C mean^2 cancels away.
ZT_HOST_DEVICE float layer_norm_row_rstd(const float* x, float mean, std::int64_t channels,
                                         float eps) {
  const std::int64_t whole = channels - channels % kLayerNormLanes;
  float lanes[kLayerNormLanes] = {};
  for (std::int64_t c = 0; c < whole; c += kLayerNormLanes) {
    ZT_LANE_LOOP
    for (std::int64_t i = 0; i < kLayerNormLanes; ++i) {
      const float d = x[c + i] - mean;
      lanes[i] += d * d;
    }
  }
  for (std::int64_t i = 0; whole + i < channels; ++i) {
    const float d = x[whole + i] - mean;
    lanes[i] += d * d;
  }
  return 1.0f / sqrtf(layer_norm_fold_lanes(lanes) / static_cast<float>(channels) + eps);
}

// forward:  mean = Σ x / C;  var = Σ (x - mean)^2 / C (biased, as PyTorch);
//           rstd = 1 / sqrt(var + eps);  n = (x - mean) * rstd;  y = n * w + b
// x, y (C); weight, bias (C). Writes the row's mean and rstd for backward. The sums in the
// order of Note [LayerNorm's row sums].
ZT_HOST_DEVICE void layer_norm_forward_row(const float* x, const float* weight, const float* bias,
                                           std::int64_t channels, float eps, float* y,
                                           float* mean_out, float* rstd_out) {
  const float mean = layer_norm_row_mean(x, channels);
  const float rstd = layer_norm_row_rstd(x, mean, channels, eps);
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
// The sums in the order of Note [LayerNorm's row sums].
ZT_HOST_DEVICE void layer_norm_backward_row(const float* dy, const float* x, const float* weight,
                                            float mean, float rstd, std::int64_t channels,
                                            float* dx, float* dweight, float* dbias) {
  const std::int64_t whole = channels - channels % kLayerNormLanes;
  float g_lanes[kLayerNormLanes] = {};
  float gn_lanes[kLayerNormLanes] = {};
  for (std::int64_t c = 0; c < whole; c += kLayerNormLanes) {
    ZT_LANE_LOOP
    for (std::int64_t i = 0; i < kLayerNormLanes; ++i) {
      const float n = (x[c + i] - mean) * rstd;
      const float g = dy[c + i] * weight[c + i];
      g_lanes[i] += g;
      gn_lanes[i] += g * n;
    }
  }
  for (std::int64_t i = 0; whole + i < channels; ++i) {
    const float n = (x[whole + i] - mean) * rstd;
    const float g = dy[whole + i] * weight[whole + i];
    g_lanes[i] += g;
    gn_lanes[i] += g * n;
  }
  const float g_mean = layer_norm_fold_lanes(g_lanes) / static_cast<float>(channels);
  const float gn_mean = layer_norm_fold_lanes(gn_lanes) / static_cast<float>(channels);
  // Two loops, each with fewer outputs that might alias its inputs: the compiler vectorizes
  // each behind a run-time overlap check, and gives up on one loop writing all three.
  for (std::int64_t c = 0; c < channels; ++c) {
    const float n = (x[c] - mean) * rstd;
    const float g = dy[c] * weight[c];
    dx[c] = rstd * (g - g_mean - n * gn_mean);
  }
  for (std::int64_t c = 0; c < channels; ++c) {
    const float n = (x[c] - mean) * rstd;
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

#undef ZT_LANE_LOOP
