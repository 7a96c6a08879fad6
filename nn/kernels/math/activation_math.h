// Per-element activation arithmetic shared by the CPU and CUDA kernels.
#pragma once

#include "core/host_device.h"

namespace zt::nn::math {

// ReLU: y = max(x, 0); dx = dy where x > 0, else 0.
ZT_HOST_DEVICE float relu_forward(float x) { return x > 0.0f ? x : 0.0f; }
ZT_HOST_DEVICE float relu_backward(float x, float dy) { return x > 0.0f ? dy : 0.0f; }

}  // namespace zt::nn::math
