// Compute-dtype selection and master-to-compute conversion.
#include "sharding/compute_dtype.h"

#include "core/error.h"

namespace zt::zero {

DType compute_dtype(const Config& config) {
  switch (config.precision.dtype) {
    case PrecisionDType::kFp32:
      return DType::kF32;
    case PrecisionDType::kBf16:
      return DType::kBF16;
    case PrecisionDType::kFp16:
      return DType::kF16;
  }
  return DType::kF32;
}

DType gradient_dtype(const Config& config) {
  const DType compute = compute_dtype(config);
  switch (config.precision.grad_dtype) {
    case GradDType::kCompute:
      return compute;
    case GradDType::kFp32:
      return DType::kF32;
    case GradDType::kAuto:
      break;
  }
  // Loss-scaled fp16 gradients summed over ranks and micro-batches overflow fp16's 65504.
  return compute == DType::kF16 ? DType::kF32 : compute;
}

void copy_master_to_compute(DeviceOps& ops, const Tensor& master, const Tensor& compute) {
  ZT_CHECK(master.numel() == compute.numel() && master.dtype() == DType::kF32,
           "master/compute copy of mismatched tensors");
  if (master.data() == compute.data()) return;
  ops.cast(master, compute);
}

}  // namespace zt::zero
