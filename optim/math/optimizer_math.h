// Per-element optimizer updates, written once for every place a shard can live (device,
// CPU-offloaded, NVMe-swapped) and for the CUDA kernels. Semantics follow PyTorch.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace zt::optim::math {

// Note [One rounding sequence on every path]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The same update runs here (the CPU loops, the CPU Adam's scalar path and tails), in the
// CUDA kernels (optim/cuda/) and in the CPU Adam's AVX2/AVX-512 loops (optim/cpu_adam/), and
// all of them give the same bits from the same inputs. That holds only if each evaluates the
// same operations, each rounded once, in the same order:
//   * Every product that meets a sum is one explicit fused multiply-add (fused_multiply_add
//     here, _mm*_fmadd_ps / _mm*_fnmadd_ps in the vector loops), rounded once. What is left
//     has no product feeding a sum, so no compiler can contract it: a contraction would
//     otherwise round differently on each path (nvcc contracts by default, GCC only where
//     the target has FMA), which is how the CUDA step once drifted an ulp from the CPU's.
//     The optim library is also built with contraction off (-ffp-contract=off for C++,
//     -fmad=false for CUDA; optim/CMakeLists.txt), so an expression added later cannot
//     reintroduce the drift unnoticed on one path.
//   * Division and square root are IEEE correctly rounded everywhere: SSE/AVX divps/sqrtps,
//     and nvcc's defaults -prec-div=true -prec-sqrt=true -ftz=false (no --use_fast_math).
//   * Scalars formed from hyperparameters (1 - β1, lr·wd) are rounded to float once, as the
//     vector loops broadcast them.
// The tests pin it: tests/unit/optim/cpu_adam_test.cpp compares every vector path with this
// code bit for bit, tests/gpu/optimizer_device_test.cpp compares CUDA with both.

// a·b + c rounded once, on the host and on a GPU (fmaf is a single instruction on both where
// the hardware has FMA, and correctly rounded in software where it does not).
ZT_HOST_DEVICE float fused_multiply_add(float a, float b, float c) { return fmaf(a, b, c); }

// SGD with momentum (dampening 0), optional Nesterov, L2 weight decay added to the gradient:
//   g' = g + wd·p;  buf = μ·buf + g';  d = nesterov ? g' + μ·buf : buf;  p -= lr·d
// With μ = 0 this is plain SGD and buf is unused. Each "x + y·z" is one fused multiply-add
// (Note [One rounding sequence on every path]).
ZT_HOST_DEVICE void sgd_update(float& param, float grad, float& momentum_buffer, float lr,
                               float momentum, float weight_decay, bool nesterov) {
  const float g = fused_multiply_add(weight_decay, param, grad);
  if (momentum == 0.0f) {
    param = fused_multiply_add(-lr, g, param);
    return;
  }
  momentum_buffer = fused_multiply_add(momentum, momentum_buffer, g);
  const float direction =
      nesterov ? fused_multiply_add(momentum, momentum_buffer, g) : momentum_buffer;
  param = fused_multiply_add(-lr, direction, param);
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
// Operation for operation what the CPU Adam's vector loops do (Note [One rounding sequence
// on every path]): the decay and both moment updates are fused multiply-adds; the rest are
// single roundings with no product meeting a sum.
ZT_HOST_DEVICE void adam_update(float& param, float grad, float& m, float& v,
                                const AdamStepScalars& s) {
  float g = grad;
  if (s.decoupled) {
    param = fused_multiply_add(-(s.lr * s.weight_decay), param, param);  // p - (lr·wd)·p
  } else {
    g = fused_multiply_add(s.weight_decay, param, g);  // g + wd·p
  }
  m = fused_multiply_add(s.beta1, m, (1.0f - s.beta1) * g);
  v = fused_multiply_add(s.beta2, v, ((1.0f - s.beta2) * g) * g);
  const float m_hat = m / s.bias_correction1;
  const float v_hat = v / s.bias_correction2;
  const float update = (s.lr * m_hat) / (sqrtf(v_hat) + s.eps);
  param = param - update;
}

}  // namespace zt::optim::math
