// Per-element optimizer updates, written once for every place a shard can live (device,
// CPU-offloaded, NVMe-swapped) and for the CUDA kernels. Semantics follow PyTorch.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace zt::optim::math {

// SGD with momentum (dampening 0), optional Nesterov, L2 weight decay added to the gradient:
//   g' = g + wd·p;  buf = μ·buf + g';  d = nesterov ? g' + μ·buf : buf;  p -= lr·d
// With μ = 0 this is plain SGD and buf is unused.
ZT_HOST_DEVICE void sgd_update(float& param, float grad, float& momentum_buffer, float lr,
                               float momentum, float weight_decay, bool nesterov) {
  const float g = grad + weight_decay * param;
  if (momentum == 0.0f) {
    param -= lr * g;
    return;
  }
  momentum_buffer = momentum * momentum_buffer + g;
  const float direction = nesterov ? g + momentum * momentum_buffer : momentum_buffer;
  param -= lr * direction;
}

struct AdamStepScalars {
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
  float bias_correction1;  // 1 - beta1^t
  float bias_correction2;  // 1 - beta2^t
  bool decoupled;          // AdamW: p -= lr·wd·p; Adam: g += wd·p
};

// Adam/AdamW (Loshchilov & Hutter, decoupled weight decay):
//   m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//   p -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + ε)
ZT_HOST_DEVICE void adam_update(float& param, float grad, float& m, float& v,
                                const AdamStepScalars& s) {
  float g = grad;
  if (s.decoupled) {
    param -= s.lr * s.weight_decay * param;
  } else {
    g += s.weight_decay * param;
  }
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float m_hat = m / s.bias_correction1;
  const float v_hat = v / s.bias_correction2;
  param -= s.lr * m_hat / (sqrtf(v_hat) + s.eps);
}

}  // namespace zt::optim::math
