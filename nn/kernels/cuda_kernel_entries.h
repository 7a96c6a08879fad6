// nn's entry into the CUDA module (Note [The CUDA backend module] in core/device/cuda_module.h):
// the CUDA kernel backend, and the cuDNN versions it runs with.
#pragma once

#include <string>

#include "core/device/cuda_module.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn {

struct CudaKernelEntries {
  const KernelBackend& (*kernel_backend)(int device_index, CudaAttention attention) = nullptr;
  // Null in a module built without the cuDNN attention.
  std::string (*cudnn_versions)() = nullptr;
};
CudaModuleSlot<CudaKernelEntries>& cuda_kernel_entries();

}  // namespace zt::nn
