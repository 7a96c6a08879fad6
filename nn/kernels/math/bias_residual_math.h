// Per-element bias and residual arithmetic shared by the CPU and CUDA kernels. Each result is
// one fp32 add, rounded once by the caller into its storage type.
#pragma once

#include "core/host_device.h"

namespace zt::nn::math {

// Linear bias, forward: y[r, c] = y[r, c] + bias[c]  (one element)
ZT_HOST_DEVICE float bias_add(float y, float bias) { return y + bias; }

// Linear bias, backward: dbias[c] += Σ_r dy[r, c]. A column sum in fp32; the order of the
// adds is the kernel's (and fixed by it), so there is no per-element function beyond `+`.

// Residual: y = x + branch, and for backward dx = dy + dbranch (one element).
ZT_HOST_DEVICE float residual_add(float x, float branch) { return x + branch; }

}  // namespace zt::nn::math
