// kernel_backend_for: the one place that maps a Device to its kernel backend.
#include "nn/kernels/kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cpu/cpu_kernel_backend.h"
#if defined(ZT_HAVE_CUDA)
#include "nn/kernels/cuda/cuda_kernel_backend.h"
#endif

namespace zt::nn {

const KernelBackend& kernel_backend_for(const Device& device) {
  // A meta device runs the CPU backend dry (Note [Dry kernels]): its workspace is the CPU's,
  // also when it stands for a GPU (whose kernels' workspace the estimate then approximates).
  if (device.kind == DeviceKind::kCpu || device.meta) return cpu::cpu_kernel_backend();
#if defined(ZT_HAVE_CUDA)
  return cuda::cuda_kernel_backend(device.index);
#else
  throw ConfigError(
      "runtime.device = \"cuda\": this zerotrain was built without the CUDA "
      "backend, so nn has no CUDA kernels; configure with -DZT_CUDA=ON");
#endif
}

}  // namespace zt::nn
