// tanh for float in fused multiply-adds, one division and bit operations: the same bits on
// the CPU's scalar and vector paths and on CUDA, within 1.34 ulp of the true tanh.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"
#include "nn/kernels/math/exp_math.h"

namespace zt::nn::math {

// Note [A tanh that vectorizes]
// glibc's tanhf is a scalar call with branches (it was a quarter of a GPT step on the CPU, in
// GELU); this one has no branch and no call, so a loop over it compiles to vector code, and
// every product that feeds a sum is an explicit fmaf, so no compiler is free to fuse or not
// fuse it (-ffp-contract): scalar, AVX2, AVX-512 and CUDA compute the same operations and
// round the same way. Both halves are evaluated and one is selected:
//   |x| < 0.625:  x + x^3 p(x^2), Cephes' odd minimax polynomial (no cancellation near 0);
//   otherwise:    sign(x) (1 - 2 / (e^{2|x|} + 1)), with |x| clamped to 10, past which tanh
//                 is 1.0f (it rounds to 1 from |x| ~ 9.01), so e^{2|x|} stays finite.
// e^y (1.25 <= y <= 20) is exp_f32 (Note [An exp that vectorizes]): in that range its two
// products by powers of 2 are exact, so it gives the bits of one 2^n product. NaN stays NaN, ±inf
// gives ±1, -0 gives -0, and tanh(-x) = -tanh(x) exactly. Over all 2^31 non-negative floats
// the error is at most 1.331 ulp (at x = 0.6283, where 1 - 2 / (e^{2x} + 1) cancels most)
// and 99.8% are correctly rounded (tests/unit/nn/tanh_math_test.cpp samples them).

inline constexpr float kTanhPolynomialBelow = 0.625f;
inline constexpr float kTanhSaturatedAbove = 10.0f;

// tanh(x), the same bits on every backend and vector path (Note [A tanh that vectorizes]).
ZT_HOST_DEVICE float tanh_f32(float x) {
  const float magnitude = fabsf(x);
  const float x2 = x * x;
  float p = -5.70498872745e-3f;
  p = fmaf(p, x2, 2.06390887954e-2f);
  p = fmaf(p, x2, -5.37397155531e-2f);
  p = fmaf(p, x2, 1.33314422036e-1f);
  p = fmaf(p, x2, -3.33332819422e-1f);
  const float near_zero = fmaf(p * x2, magnitude, magnitude);
  // Written so that NaN compares false and stays NaN.
  const float clamped = magnitude > kTanhSaturatedAbove ? kTanhSaturatedAbove : magnitude;
  const float far = 1.0f - 2.0f / (exp_f32(2.0f * clamped) + 1.0f);
  return copysignf(magnitude < kTanhPolynomialBelow ? near_zero : far, x);
}

}  // namespace zt::nn::math
