// Per-element SwiGLU arithmetic shared by the CPU and CUDA kernels (Llama's MLP activation):
// h = silu(gate) * up, with silu(x) = x * sigmoid(x), on the two halves of the fc output
// (Note [SwiGLU column order] in nn/kernels/kernel_backend.h).
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace zt::nn::math {

ZT_HOST_DEVICE float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// h = silu(gate) * up
ZT_HOST_DEVICE float swiglu_forward(float gate, float up) { return gate * sigmoid(gate) * up; }

// The gradients at gate and up given dh, with s = sigmoid(gate):
//   d_up = dh * silu(gate) = dh * gate * s
//   d_gate = dh * up * silu'(gate),  silu'(x) = s (1 + x (1 - s))
// Both inputs are taken by value, so the outputs may overwrite them.
ZT_HOST_DEVICE void swiglu_backward(float gate, float up, float dh, float* d_gate, float* d_up) {
  const float s = sigmoid(gate);
  *d_gate = dh * up * s * (1.0f + gate * (1.0f - s));
  *d_up = dh * gate * s;
}

}  // namespace zt::nn::math
