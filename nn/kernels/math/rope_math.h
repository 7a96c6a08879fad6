// Rotary position embedding arithmetic shared by the CPU and CUDA kernels (Llama's q and k):
// the angle of one (position, pair) and the rotation of one pair of a head by it, in the
// half-split pairing of Note [Rotary pairs] in nn/kernels/kernel_backend.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace zt::nn::math {

// Note [Rotary angles]
// Pair i of a head of head_dim values turns by angle = position * inv_freq_i with
// inv_freq_i = theta^(-2i / head_dim). inv_freq is evaluated in double and rounded once to
// f32, so the CPU and the GPU (whose powf errs by several ulps) agree on it; the product with
// the position is one f32 multiply and cos/sin are f32, as Hugging Face's and Meta's Llama
// compute their fp32 tables, so that weights trained there see the angles they were trained
// with (an f32 angle at position p is off by up to p 2^-24 radians from the exact one, and
// that is what those models learned).
ZT_HOST_DEVICE float rope_inv_freq(std::int64_t pair, std::int64_t head_dim, float theta) {
  const double exponent = static_cast<double>(2 * pair) / static_cast<double>(head_dim);
  return static_cast<float>(1.0 / pow(static_cast<double>(theta), exponent));
}
ZT_HOST_DEVICE float rope_angle(std::int64_t position, std::int64_t pair, std::int64_t head_dim,
                                float theta) {
  return static_cast<float>(position) * rope_inv_freq(pair, head_dim, theta);
}

// (x0, x1) turned by the angle whose cosine and sine are given:
//   y0 = x0 cos - x1 sin;  y1 = x1 cos + x0 sin
// The inverse rotation (backward: the rotation's transpose) is the same with -sin.
ZT_HOST_DEVICE void rope_rotate_pair(float x0, float x1, float cos_angle, float sin_angle,
                                     float* y0, float* y1) {
  *y0 = x0 * cos_angle - x1 * sin_angle;
  *y1 = x1 * cos_angle + x0 * sin_angle;
}

}  // namespace zt::nn::math
