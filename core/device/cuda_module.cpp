// Opening the CUDA module (Note [The CUDA backend module]) and the error that says what is
// missing when it cannot be opened.
#include "core/device/cuda_module.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string_view>

// The module's entry point: defined when the module's objects are linked into the program
// (tests, benchmarks), null otherwise (libzerotrain, which opens the module).
extern "C" void zt_cuda_module_install() __attribute__((weak));

namespace zt {
namespace {

constexpr const char* kModuleName = "libzerotrain_cuda.so";

#if defined(ZT_CUDA_MAJOR_VERSION)
const std::string kCudaMajor = std::to_string(ZT_CUDA_MAJOR_VERSION);
#else
const std::string kCudaMajor = "";
#endif

// What to install for the library the loader named in `loader_error`.
std::string install_advice(std::string_view loader_error) {
  const auto names = [&](std::string_view library) {
    return loader_error.find(library) != std::string_view::npos;
  };
  const std::string findable =
      ", and make it findable by the loader (ldconfig, or LD_LIBRARY_PATH naming its folder)";
  if (names(kModuleName)) {
    return "this installation lacks zerotrain's CUDA module: install zerotrain from a build "
           "configured with the CUDA toolkit (-DZT_CUDA=ON)";
  }
  if (names("libcudart") || names("libcublas")) {
    return "install the CUDA " + kCudaMajor +
           " runtime and cuBLAS (NVIDIA's CUDA toolkit, or the PyPI wheels nvidia-cuda-runtime "
           "and nvidia-cublas)" +
           findable;
  }
  if (names("libnccl")) {
    return "install NCCL 2 (NVIDIA's libnccl2 package, or the PyPI wheel nvidia-nccl-cu" +
           kCudaMajor + ")" + findable;
  }
  if (names("libcudnn")) {
    return "install cuDNN 9 (NVIDIA's cudnn9-cuda-" + kCudaMajor +
           " package, or the PyPI wheel nvidia-cudnn-cu" + kCudaMajor + ")" + findable;
  }
  if (names("libcuda.so")) {
    return "install NVIDIA's GPU driver (libcuda.so.1 comes with it)";
  }
  return "install the CUDA " + kCudaMajor + " libraries it names" + findable;
}

// Opens the module and runs its entry point; "" on success, else why not.
std::string open_module() {
  if (zt_cuda_module_install != nullptr) {
    zt_cuda_module_install();
    return "";
  }
  if (!cuda_backend_built()) {
    return "this zerotrain was built without the CUDA backend (configure with -DZT_CUDA=ON on "
           "a machine with the CUDA toolkit), so it can only run on the CPU";
  }
  const std::string path = cuda_module_path();
  ::dlerror();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    const std::string loader_error = why == nullptr ? "unknown error" : why;
    return "cannot load zerotrain's CUDA backend: " + loader_error + "; " +
           install_advice(loader_error);
  }
  void* entry = ::dlsym(handle, "zt_cuda_module_install");
  if (entry == nullptr) {
    return "cannot load zerotrain's CUDA backend: " + path +
           " has no zt_cuda_module_install (a module of another zerotrain version?)";
  }
  reinterpret_cast<void (*)()>(entry)();
  return "";
}

}  // namespace

std::string cuda_module_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&load_cuda_module), &info) == 0 ||
      info.dli_fname == nullptr) {
    return kModuleName;
  }
  return (std::filesystem::path(info.dli_fname).parent_path() / kModuleName).string();
}

void load_cuda_module() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] { failure = open_module(); });
  if (!failure.empty()) throw ConfigError("runtime.device = \"cuda\": " + failure);
}

CudaModuleSlot<CudaDeviceEntries>& cuda_device_entries() {
  static CudaModuleSlot<CudaDeviceEntries> slot;
  return slot;
}

}  // namespace zt
