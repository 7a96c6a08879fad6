// Opens libcudnn.so.9 for the cuDNN frontend's dynamic loading mode (cudnn_library.h).
#include "nn/kernels/cuda/cudnn/cudnn_library.h"

#include <dlfcn.h>

#include "nn/kernels/cuda/cudnn/cudnn_check.h"

// The frontend's dynamic loading mode resolves every cuDNN call through this handle, which
// the program defines (cudnn_frontend_shim.h); null until cudnn_library_missing() opens it.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;  // NOLINT: the frontend's own global, written once below
}  // namespace cudnn_frontend

namespace zt::nn::cuda {
namespace {

std::optional<std::string> open_cudnn() {
  ::dlerror();
  // Never closed: cuDNN's handles and graphs may outlive any owner we could give it.
  void* handle = ::dlopen(kCudnnLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return why != nullptr ? std::string(why) : std::string(kCudnnLibrary) + " not found";
  }
  cudnn_frontend::cudnn_dlhandle = handle;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cudnn_library_missing() {
  static const std::optional<std::string> once = open_cudnn();  // thread-safe, opened once
  return once;
}

void require_cudnn_library() {
  if (const std::optional<std::string> missing = cudnn_library_missing()) {
    throw CudnnError("cuDNN's " + std::string(kCudnnLibrary) + " cannot be used here (" + *missing +
                     "): install cuDNN 9 (libcudnn9-cuda-13)");
  }
}

}  // namespace zt::nn::cuda
