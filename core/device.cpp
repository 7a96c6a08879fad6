// Device naming and build-time backend facts.
#include "core/device.h"

namespace zt {

std::string Device::to_string() const {
  const std::string name =
      std::string(kind == DeviceKind::kCpu ? "cpu:" : "cuda:") + std::to_string(index);
  return meta ? "meta(" + name + ")" : name;
}

bool cuda_backend_built() {
#if defined(ZT_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

}  // namespace zt
