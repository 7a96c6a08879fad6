// libcudnn.so.9, opened with dlopen when the attention first asks for cuDNN (Note [CUDA
// libraries opened when used] in core/device/cuda_module.h). The cuDNN frontend is compiled
// in its dynamic loading mode (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING): it reaches every cuDNN
// function through the handle opened here, so the CUDA module names no cuDNN library.
#pragma once

#include <optional>
#include <string>

namespace zt::nn::cuda {

// cuDNN 9's soname; it opens its sub-libraries (libcudnn_graph, libcudnn_engines_*) itself,
// when a handle is created and graphs are built.
inline constexpr const char* kCudnnLibrary = "libcudnn.so.9";

// Why libcudnn.so.9 cannot be used (the loader's message), or nullopt once it is open. Opens
// it at the first call; later calls return the same answer.
std::optional<std::string> cudnn_library_missing();

// Opens the library or throws CudnnError naming libcudnn.so.9.
void require_cudnn_library();

}  // namespace zt::nn::cuda
