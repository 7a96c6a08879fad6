// kernel_backend_for: the one place that maps a Device (and the CUDA attention choice) to its
// kernel backend; and what this build knows of the cuDNN attention.
#include "nn/kernels/kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cpu/cpu_kernel_backend.h"
#include "nn/kernels/cuda_dry_kernel_backend.h"
#if defined(ZT_HAVE_CUDA)
#include "nn/kernels/cuda/cuda_kernel_backend.h"
#endif
#if defined(ZT_HAVE_CUDNN)
#include "nn/kernels/cuda/cudnn/cudnn_attention.h"
#endif

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
#if defined(ZT_HAVE_CUDNN)
  return cuda::cudnn_versions();
#else
  return "";
#endif
}

const KernelBackend& kernel_backend_for(const Device& device, CudaAttention attention) {
  // A meta device runs its device's backend dry (Note [Dry kernels]): the CPU backend checks
  // for meta tensors itself; the CUDA backend's allocations are replayed by its dry twin,
  // which builds without CUDA, so a CPU-only build estimates GPU runs too (cuDNN's included:
  // its workspace is a bound computed from the shapes, Note [cuDNN attention workspace]).
  if (device.kind == DeviceKind::kCpu) return cpu::cpu_kernel_backend();
  if (device.meta) return cuda::cuda_dry_kernel_backend(attention);
#if defined(ZT_HAVE_CUDA)
  if (attention == CudaAttention::kCudnn && !cudnn_attention_built()) {
    throw ConfigError(
        "runtime.attention = \"cudnn\": this zerotrain was built without the cuDNN "
        "attention (" +
        cudnn_attention_missing() + "); use runtime.attention = \"rows\"");
  }
  return cuda::cuda_kernel_backend(device.index, attention);
#else
  throw ConfigError(
      "runtime.device = \"cuda\": this zerotrain was built without the CUDA "
      "backend, so nn has no CUDA kernels; configure with -DZT_CUDA=ON");
#endif
}

}  // namespace zt::nn
