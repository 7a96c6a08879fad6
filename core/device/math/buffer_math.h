// The per-element arithmetic of DeviceOps, written once for CpuDeviceOps' loops and the CUDA
// kernels, so that what the GPU computes is what the CPU tests check on every commit.
// Note [No contraction on the device]: nvcc fuses a*x + b*y into a fused multiply-add
// (one rounding instead of two) unless told not to; the host compiler does not (no FMA in
// the baseline x86-64 target). The device side therefore uses the round-to-nearest
// intrinsics, which are never fused, and gives bitwise the CPU's results.
#pragma once

#include "core/host_device.h"

namespace zt::buffer_math {

ZT_HOST_DEVICE float multiply(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

ZT_HOST_DEVICE float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// values *= factor, per element.
ZT_HOST_DEVICE float scaled(float value, float factor) { return multiply(value, factor); }

// alpha * x + beta * y; with beta == 0 the old y is not read (it may be NaN or garbage).
ZT_HOST_DEVICE float axpby(float alpha, float x, float beta, float y) {
  if (beta == 0.0f) return multiply(alpha, x);
  return add(multiply(alpha, x), multiply(beta, y));
}

// One term of Σ x², in double so that sums over millions of elements lose nothing to fp32.
ZT_HOST_DEVICE double square(float value) {
  const double widened = value;
  return widened * widened;
}

}  // namespace zt::buffer_math
