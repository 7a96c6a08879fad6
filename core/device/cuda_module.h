// The CUDA backend as a module loaded at run time (Note [The CUDA backend module]): the
// loader, and the slot through which each layer reaches the module's entry points.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/device.h"
#include "core/device/device_context.h"
#include "core/error.h"

namespace zt {

// Note [The CUDA backend module]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// libzerotrain runs on any machine: it links no CUDA library. Everything that calls CUDA,
// cuBLAS, NCCL or cuDNN (the cuda/ and nccl/ folders of core, nn, optim and comm) is built
// into a module of its own, libzerotrain_cuda.so, installed beside libzerotrain, which links
// CUDA's runtime, cuBLAS and libzerotrain, and opens cuDNN and NCCL when used (Note [CUDA
// libraries opened when used]). The first time a layer needs the GPU (a CUDA device
// context, kernel backend, optimizer step or NCCL communicator) load_cuda_module() opens
// the module with dlopen and calls its one C entry point, zt_cuda_module_install, which
// fills every layer's CudaModuleSlot with the module's functions. A run on the CPU never
// opens it, so never touches a CUDA library. When opening fails, the error names what the
// loader could not find and how to install it.
//
// Programs linked with the layers' static archives (the tests, the benchmarks) link the
// module's objects too: the entry point is then part of the program (a weak reference
// finds it) and nothing is opened. Such a program never opens the module from disk, which
// would bring a second copy of every layer with it.

// Note [CUDA libraries opened when used]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The module links (NEEDED) only what every GPU run uses: CUDA's runtime and cuBLAS(Lt). cuDNN
// and NCCL are opened with dlopen by their soname when a run first needs them, so a GPU
// machine without them trains with runtime.attention = "rows" on one GPU, or over Gloo:
//   - cuDNN (libcudnn.so.9, which opens its libcudnn_graph and libcudnn_engines_* itself):
//     the cuDNN frontend is compiled in its dynamic loading mode and reaches every cuDNN
//     function through the handle nn/kernels/cuda/cudnn/cudnn_library.cpp opens, when the
//     trainer checks the run's attention graphs before step 1 (Note [cuDNN attention never
//     ends a run]). Missing, it is cuDNN's refusal like any other: runtime.attention =
//     "cudnn" is refused at start naming libcudnn.so.9 and the key.
//   - NCCL (libnccl.so.2): comm/nccl/nccl_library.cpp resolves the functions the backend
//     calls into a table, when a rank chooses its collectives (available_comm_backend in
//     runtime/engine/device_selection.h): comm.backend = "nccl" without it is a ConfigError
//     naming the library and the key; "auto" moves tensors with Gloo and warns once.
// Install.CudaModuleLoadsWithCudnnAndNcclOutOfReach checks the NEEDED entries and loads the
// module with both libraries out of the loader's reach.

// Opens the CUDA module once (later calls return at once or throw the same error). Throws
// ConfigError naming runtime.device when this build has no CUDA backend, or when the module
// or a library it needs cannot be loaded: the loader's message, and what to install.
void load_cuda_module();

// The path load_cuda_module() opens: libzerotrain_cuda.so beside the library or program
// holding this function.
std::string cuda_module_path();

// What a layer reaches in the CUDA module: a table of function pointers (`Entries`), set
// once by the module's entry point while load_cuda_module() runs, read only after it.
template <typename Entries>
class CudaModuleSlot {
 public:
  void install(const Entries& entries) {
    entries_ = entries;
    installed_ = true;
  }
  // Loads the module first; throws as load_cuda_module() does.
  const Entries& get() {
    load_cuda_module();
    ZT_CHECK(installed_, "the CUDA module loaded but did not install all its entry points");
    return entries_;
  }

 private:
  Entries entries_{};
  bool installed_ = false;
};

// core's entry into the module: the DeviceContext of a GPU.
struct CudaDeviceEntries {
  std::unique_ptr<DeviceContext> (*make_device_context)(Device device,
                                                        std::int64_t capacity_bytes) = nullptr;
};
CudaModuleSlot<CudaDeviceEntries>& cuda_device_entries();

}  // namespace zt
