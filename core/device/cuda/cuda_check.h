// ZT_CORE_CUDA_CHECK: every CUDA runtime call of core's CUDA backend goes through it, naming
// the call, what it was for, and CUDA's own message; and CurrentDevice, which makes a device
// current for a scope (the comm and copy threads that call in have their own current device).
// Included only by core/device/cuda's own files.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"

namespace zt {

// A CUDA call failed: a kernel fault, a lost device, a driver error.
class CudaError : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void check_core_cuda(cudaError_t status, const char* call, const std::string& context) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA call ") + call + " failed (" + context +
                    "): " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}
}  // namespace detail

}  // namespace zt

#define ZT_CORE_CUDA_CHECK(call, context) ::zt::detail::check_core_cuda((call), #call, (context))

namespace zt {

// Makes `device_index` the calling thread's current device until the scope ends.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device_index) {
    ZT_CORE_CUDA_CHECK(cudaGetDevice(&previous_), "the calling thread's device");
    if (previous_ != device_index) {
      ZT_CORE_CUDA_CHECK(cudaSetDevice(device_index), "cuda:" + std::to_string(device_index));
      changed_ = true;
    }
  }
  ~CurrentDevice() {
    if (changed_) cudaSetDevice(previous_);  // restoring what was current cannot fail usefully
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace zt
