// Per-element GELU arithmetic (tanh approximation, as GPT-2) shared by the CPU and CUDA
// kernels.
#pragma once

#include <cmath>

#include "core/host_device.h"
#include "nn/kernels/math/tanh_math.h"

namespace zt::nn::math {

inline constexpr float kGeluSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;

// Products that feed a sum are explicit fmaf and tanh is tanh_f32, so the CPU's scalar and
// vector loops and CUDA give the same bits (Note [A tanh that vectorizes]).

// u = sqrt(2/pi) (x + 0.044715 x^3)
ZT_HOST_DEVICE float gelu_tanh_argument(float x) {
  return kGeluSqrt2OverPi * fmaf(kGeluCubic * x * x, x, x);
}

// y = 0.5 x (1 + tanh(u))
ZT_HOST_DEVICE float gelu_forward(float x) {
  return 0.5f * x * (1.0f + tanh_f32(gelu_tanh_argument(x)));
}

// dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2),
// the exact derivative of the approximation above; returns dx = dy/dx * dout.
ZT_HOST_DEVICE float gelu_backward(float x, float dout) {
  const float tanh_u = tanh_f32(gelu_tanh_argument(x));
  const float du_dx = kGeluSqrt2OverPi * fmaf(3.0f * kGeluCubic * x, x, 1.0f);
  const float sech2_u = fmaf(-tanh_u, tanh_u, 1.0f);
  const float local = fmaf(0.5f * x * sech2_u, du_dx, 0.5f * (1.0f + tanh_u));
  return local * dout;
}

}  // namespace zt::nn::math
