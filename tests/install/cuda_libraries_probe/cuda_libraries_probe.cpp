// Opens libzerotrain's CUDA module as a user's program does (the program links libzerotrain
// only) and asks it whether NCCL and cuDNN can be used, printing one line each:
//   module: loaded | module: <why not>
//   nccl: opens | nccl: <why not>
//   cudnn: builds | cudnn: <why not>
// check_cuda_module_without_cudnn_nccl.cmake runs it with libcudnn and libnccl out of the
// loader's reach. Exits 0 once the module is loaded, 1 when it cannot be.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "comm/communicator_factory.h"
#include "core/device.h"
#include "core/device/cuda_module.h"
#include "core/dtype.h"
#include "nn/kernels/kernel_backend.h"

namespace {

void report(const char* what, const std::optional<std::string>& problem, const char* fine) {
  std::printf("%s: %s\n", what, problem ? problem->c_str() : fine);
}

}  // namespace

int main() {
  try {
    zt::load_cuda_module();
  } catch (const std::exception& e) {
    std::printf("module: %s\n", e.what());
    return 1;
  }
  std::printf("module: loaded\n");
  report("nccl", zt::comm::nccl_library_problem(), "opens");
  // A small causal attention: B 1, T 8, 2 heads of 16 (cuDNN needs a GPU to build its graphs,
  // so on a machine without one the answer past an opened library is CUDA's).
  const zt::nn::AttentionShape shape{1, 8, 2, 2, 16, 8};
  report("cudnn", zt::nn::cudnn_attention_refusal(zt::Device::cuda(0), shape, zt::DType::kBF16),
         "builds");
  return 0;
}
