// ZT_CUDA_CHECK: every CUDA runtime call goes through it, naming the call and its context.
// Included only by CUDA backend files.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"

namespace zt::nn::cuda {

class CudaError : public zt::Error {
 public:
  using zt::Error::Error;
};

inline void check_cuda(cudaError_t status, const char* call, const std::string& context) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA call ") + call + " failed (" + context +
                    "): " + cudaGetErrorString(status));
  }
}

}  // namespace zt::nn::cuda

#define ZT_CUDA_CHECK(call, context) ::zt::nn::cuda::check_cuda((call), #call, (context))
