// nn's entry into the CUDA module (Note [The CUDA backend module] in core/device/cuda_module.h):
// the CUDA kernel backend, the cuDNN versions it runs with and cuDNN's check of the run's shapes.
#pragma once

#include <optional>
#include <string>

#include "core/device/cuda_module.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn {

struct CudaKernelEntries {
  const KernelBackend& (*kernel_backend)(int device_index, CudaAttention attention) = nullptr;
  // Null in a module built without the cuDNN attention.
  std::string (*cudnn_versions)() = nullptr;
  std::optional<std::string> (*cudnn_attention_check)(int device_index, const AttentionShape& shape,
                                                      DType dtype) = nullptr;
};
CudaModuleSlot<CudaKernelEntries>& cuda_kernel_entries();

}  // namespace zt::nn
