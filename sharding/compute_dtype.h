// The dtype modules compute in (precision.dtype), and the one conversion every strategy
// makes after an optimizer step: fp32 master weights into compute copies.
#pragma once

#include "core/config/config.h"
#include "core/device/device_ops.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace zt::zero {

DType compute_dtype(const Config& config);
// The dtype standing gradients are kept in (precision.grad_dtype).
DType gradient_dtype(const Config& config);

// Copies (f32) `master` into `compute` (its dtype) on their device, rounding to nearest even;
// nothing when they are the same storage (fp32, where the master is the parameters).
void copy_master_to_compute(DeviceOps& ops, const Tensor& master, const Tensor& compute);

}  // namespace zt::zero
