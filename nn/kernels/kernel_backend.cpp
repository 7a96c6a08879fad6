// kernel_backend_for: the one place that maps a Device to its kernel backend.
#include "nn/kernels/kernel_backend.h"

#include "core/error.h"
#include "nn/kernels/cpu/cpu_kernel_backend.h"
#include "nn/kernels/cuda_dry_kernel_backend.h"
#if defined(ZT_HAVE_CUDA)
#include "nn/kernels/cuda/cuda_kernel_backend.h"
#endif

namespace zt::nn {

const KernelBackend& kernel_backend_for(const Device& device) {
  // A meta device runs its device's backend dry (Note [Dry kernels]): the CPU backend checks
  // for meta tensors itself; the CUDA backend's allocations are replayed by its dry twin,
  // which builds without CUDA, so a CPU-only build estimates GPU runs too.
  if (device.kind == DeviceKind::kCpu) return cpu::cpu_kernel_backend();
  if (device.meta) return cuda::cuda_dry_kernel_backend();
#if defined(ZT_HAVE_CUDA)
  return cuda::cuda_kernel_backend(device.index);
#else
  throw ConfigError(
      "runtime.device = \"cuda\": this zerotrain was built without the CUDA "
      "backend, so nn has no CUDA kernels; configure with -DZT_CUDA=ON");
#endif
}

}  // namespace zt::nn
