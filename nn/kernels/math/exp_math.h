// e^x for float in fused multiply-adds and bit operations: the same bits on the CPU's scalar
// and vector paths and on CUDA, within 1.02 ulp of the true exp, subnormal results included.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/host_device.h"

namespace zt::nn::math {

// Note [An exp that vectorizes]
// glibc's expf is a scalar call (a loop over it stays scalar), and CUDA's expf rounds
// differently from it, so the softmaxes (attention's, cross-entropy's) use this one: no
// branch and no call, every product that feeds a sum an explicit fmaf (as tanh_f32, Note [A
// tanh that vectorizes]), so scalar, AVX2, AVX-512 and CUDA give the same bits.
//   x is clamped to [kExpLowest, kExpHighest] (a select NaN passes through, to stay NaN);
//   x = n ln2 + r, n = round(x log2 e) (adding 1.5 * 2^23 rounds to the nearest integer in
//     the low mantissa bits; no float-to-int conversion, undefined for NaN in C++), |r| <=
//     ln2 / 2, ln2 split in two (Cody-Waite) so that r is exact;
//   e^r = 1 + r + r^2 q(r), Cephes' expf polynomial;
//   2^n written into exponent bits in two halves, 2^(n - n/2) 2^(n/2), each a normal float
//     for every n the clamp allows (-150..128): e^r 2^(n/2) is exact, and the one rounding
//     of the second product gives subnormal results correctly (one 2^n would be no float
//     below 2^-126) and +inf above the largest float.
// So exp(-inf) and every x < -103.98 (where e^x < 2^-150, half the least subnormal) give
// exactly 0, x > 88.73 gives +inf, NaN gives NaN, exp(0) = 1. Over all 2.24e9 floats in
// [kExpLowest, kExpHighest] the error is at most 1.0103 ulp (at x = -5.8779; the ulp of a
// subnormal result is 2^-149) and 99.2% are correctly rounded (tests/unit/nn/exp_math_test.cpp
// samples them). tanh_f32 (tanh_math.h) calls it for e^{2|x|}.
inline constexpr float kExpLowest = -104.0f;  // e^-104 < 2^-150: rounds to 0
inline constexpr float kExpHighest = 89.0f;   // e^89 > the largest float: rounds to +inf

// 2^k for a k whose 2^k is a normal float (-126 <= k <= 127), from its exponent bits.
ZT_HOST_DEVICE float exp_two_to(std::int32_t k) {
  return zt::detail::bit_cast<float>(static_cast<std::uint32_t>(k + 127) << 23);
}

// e^x, the same bits on every backend and vector path (Note [An exp that vectorizes]).
ZT_HOST_DEVICE float exp_f32(float x) {
  constexpr float kRoundingShift = 12582912.0f;  // 1.5 * 2^23
  constexpr std::uint32_t kRoundingShiftBits = 0x4B400000u;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;  // few mantissa bits: n * kLn2High is exact
  constexpr float kLn2Low = -2.12194440e-4f;
  // Written so that NaN compares false and stays NaN.
  x = x < kExpLowest ? kExpLowest : x;
  x = x > kExpHighest ? kExpHighest : x;
  const float shifted = fmaf(x, kLog2e, kRoundingShift);
  const float n = shifted - kRoundingShift;
  float r = fmaf(n, -kLn2High, x);
  r = fmaf(n, -kLn2Low, r);
  float q = 1.9875691500e-4f;
  q = fmaf(q, r, 1.3981999507e-3f);
  q = fmaf(q, r, 8.3334519073e-3f);
  q = fmaf(q, r, 4.1665795894e-2f);
  q = fmaf(q, r, 1.6666665459e-1f);
  q = fmaf(q, r, 5.0000001201e-1f);
  const float e_r = fmaf(q, r * r, r) + 1.0f;
  // shifted is 1.5 * 2^23 + n exactly (|n| < 2^22), so its bits are kRoundingShiftBits + n.
  const auto n_int =
      static_cast<std::int32_t>(zt::detail::bit_cast<std::uint32_t>(shifted) - kRoundingShiftBits);
  const std::int32_t half = n_int >> 1;  // floor(n / 2): both halves lie in -75..64
  return e_r * exp_two_to(n_int - half) * exp_two_to(half);
}

}  // namespace zt::nn::math
