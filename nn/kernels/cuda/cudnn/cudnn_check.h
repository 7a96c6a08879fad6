// ZT_CUDNN_CHECK and check_frontend: every cuDNN and cuDNN frontend call goes through one of
// them, naming the call and its context. Included only by nn/kernels/cuda/cudnn/.
#pragma once

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <string>

#include "core/error.h"

namespace zt::nn::cuda {

class CudnnError : public zt::Error {
 public:
  using zt::Error::Error;
};

inline void check_cudnn(cudnnStatus_t status, const char* call, const std::string& context) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw CudnnError(std::string("cuDNN call ") + call + " failed (" + context +
                     "): " + cudnn_frontend::detail::get_error_string(status));
  }
}

// A frontend step (validate, build, execute) that returned an error object.
inline void check_frontend(const cudnn_frontend::error_object& status, const char* step,
                           const std::string& context) {
  if (status.is_good()) return;
  throw CudnnError(std::string("cuDNN frontend ") + step + " failed (" + context +
                   "): " + status.err_msg);
}

}  // namespace zt::nn::cuda

#define ZT_CUDNN_CHECK(call, context) ::zt::nn::cuda::check_cudnn((call), #call, (context))
