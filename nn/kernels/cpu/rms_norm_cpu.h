// RMSNorm on the CPU: row loops over nn/kernels/math/rms_norm_math.h (see
// KernelBackend::rms_norm_forward).
#pragma once

#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn::cpu {

// x, y (N, C); weight (C); rstd (N) f32, written.
void rms_norm_forward(const Tensor& x, const Tensor& weight, float eps, const Tensor& y,
                      const Tensor& rstd, MemoryTracker& tracker);
// dx (N, C) written; dweight (C) f32 accumulated.
void rms_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& rstd, const Tensor& dy,
                       const Tensor& dx, const Tensor& dweight, MemoryTracker& tracker);

}  // namespace zt::nn::cpu
