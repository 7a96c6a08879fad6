// Per-element GELU arithmetic (tanh approximation, as GPT-2) shared by the CPU and CUDA
// kernels.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace zt::nn::math {

inline constexpr float kGeluSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;

// y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
ZT_HOST_DEVICE float gelu_forward(float x) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

// dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2),
// the exact derivative of the approximation above; returns dx = dy/dx * dout.
ZT_HOST_DEVICE float gelu_backward(float x, float dout) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const float tanh_u = tanhf(u);
  const float du_dx = kGeluSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  const float local = 0.5f * (1.0f + tanh_u) + 0.5f * x * (1.0f - tanh_u * tanh_u) * du_dx;
  return local * dout;
}

}  // namespace zt::nn::math
