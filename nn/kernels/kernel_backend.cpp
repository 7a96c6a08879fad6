// kernel_backend_for: the one place that maps a Device (and the CUDA attention choice) to its
// kernel backend; and what this build knows of the cuDNN attention.
#include "nn/kernels/kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cpu/cpu_kernel_backend.h"
#include "nn/kernels/cuda_dry_kernel_backend.h"
#include "nn/kernels/cuda_kernel_entries.h"

namespace zt::nn {

bool cudnn_attention_built() {
#if defined(ZT_HAVE_CUDNN)
  return true;
#else
  return false;
#endif
}

std::string cudnn_attention_missing() {
#if defined(ZT_HAVE_CUDNN)
  return "";
#elif !defined(ZT_HAVE_CUDA)
  return "configure did not find a CUDA compiler (the CUDA backend is off)";
#elif defined(ZT_CUDNN_MISSING)
  return ZT_CUDNN_MISSING;
#else
  return "configure did not find cuDNN 9 or the cuDNN frontend (scripts/cudnn-frontend installs "
         "it)";
#endif
}

std::string cudnn_versions() {
  if (!cudnn_attention_built()) return "";
  // The estimator describes a CUDA run on machines without CUDA's libraries too.
  try {
    const CudaKernelEntries& entries = cuda_kernel_entries().get();
    if (entries.cudnn_versions != nullptr) return entries.cudnn_versions();
  } catch (const ConfigError&) {
  }
  return "cuDNN at build; the CUDA module cannot be loaded here";
}

std::optional<std::string> cudnn_attention_refusal(const Device& device,
                                                   const AttentionShape& shape, DType dtype) {
  if (device.meta) return std::nullopt;
  if (!cudnn_attention_built()) {
    return "this zerotrain was built without the cuDNN attention (" + cudnn_attention_missing() +
           ")";
  }
  const CudaKernelEntries& entries = cuda_kernel_entries().get();
  ZT_CHECK(entries.cudnn_attention_check != nullptr,
           "the CUDA module was built without the cuDNN attention this library has");
  return entries.cudnn_attention_check(device.index, shape, dtype);
}

CudaModuleSlot<CudaKernelEntries>& cuda_kernel_entries() {
  static CudaModuleSlot<CudaKernelEntries> slot;
  return slot;
}

const KernelBackend& kernel_backend_for(const Device& device, CudaAttention attention) {
  // A meta device runs its device's backend dry (Note [Dry kernels]): the CPU backend checks
  // for meta tensors itself; the CUDA backend's allocations are replayed by its dry twin,
  // which builds without CUDA, so a CPU-only build estimates GPU runs too (cuDNN's included:
  // its workspace is a bound computed from the shapes, Note [cuDNN attention workspace]).
  if (device.kind == DeviceKind::kCpu) return cpu::cpu_kernel_backend();
  if (device.meta) return cuda::cuda_dry_kernel_backend(attention);
  if (attention == CudaAttention::kCudnn && !cudnn_attention_built()) {
    throw ConfigError(
        "runtime.attention = \"cudnn\": this zerotrain was built without the cuDNN "
        "attention (" +
        cudnn_attention_missing() + "); use runtime.attention = \"rows\"");
  }
  return cuda_kernel_entries().get().kernel_backend(device.index, attention);
}

}  // namespace zt::nn
