// ZT_CUBLAS_CHECK: every cuBLAS call goes through it, naming the call and its context.
// Included only by CUDA backend files.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "core/error.h"

namespace zt::nn::cuda {

class CublasError : public zt::Error {
 public:
  using zt::Error::Error;
};

inline void check_cublas(cublasStatus_t status, const char* call, const std::string& context) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CublasError(std::string("cuBLAS call ") + call + " failed (" + context +
                      "): " + cublasGetStatusName(status) + ", " + cublasGetStatusString(status));
  }
}

}  // namespace zt::nn::cuda

#define ZT_CUBLAS_CHECK(call, context) ::zt::nn::cuda::check_cublas((call), #call, (context))
