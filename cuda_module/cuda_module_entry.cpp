// The CUDA module's one entry point (Note [The CUDA backend module] in
// core/device/cuda_module.h): hands each layer the functions of its CUDA backend.
#include <memory>

#include "comm/nccl_entries.h"
#include "core/device/cuda/cuda_device_context.h"
#include "core/device/cuda_module.h"
#include "nn/kernels/cuda/cuda_kernel_backend.h"
#include "nn/kernels/cuda_kernel_entries.h"
#include "optim/cuda/optimizer_cuda.h"
#include "optim/cuda_optimizer_entries.h"
#if defined(ZT_HAVE_NCCL)
#include "comm/nccl/nccl_communicator.h"
#endif
#if defined(ZT_HAVE_CUDNN)
#include "nn/kernels/cuda/cudnn/cudnn_attention.h"
#endif

namespace {

#if defined(ZT_HAVE_NCCL)
std::unique_ptr<zt::comm::Communicator> create_nccl(zt::comm::Store& store, int rank,
                                                    int world_size,
                                                    const zt::comm::CommOptions& options) {
  zt::comm::require_nccl_library();  // throws, naming libnccl.so.2 and comm.backend, when it is
                                     // missing
  return std::make_unique<zt::comm::NcclCommunicator>(store, rank, world_size, options);
}
#endif

}  // namespace

extern "C" __attribute__((visibility("default"))) void zt_cuda_module_install() {
  zt::cuda_device_entries().install({&zt::make_cuda_device_context});
  zt::nn::CudaKernelEntries kernels;
  kernels.kernel_backend = &zt::nn::cuda::cuda_kernel_backend;
#if defined(ZT_HAVE_CUDNN)
  kernels.cudnn_versions = &zt::nn::cuda::cudnn_versions;
  kernels.cudnn_attention_check = &zt::nn::cuda::cudnn_attention_check;
#endif
  zt::nn::cuda_kernel_entries().install(kernels);
  zt::optim::CudaOptimizerEntries optimizer;
  optimizer.sgd_step = &zt::optim::cuda::sgd_step;
  optimizer.adam_step = &zt::optim::cuda::adam_step;
  zt::optim::cuda_optimizer_entries().install(optimizer);
  zt::comm::NcclEntries nccl;
#if defined(ZT_HAVE_NCCL)
  nccl.create = &create_nccl;
  nccl.library_missing = &zt::comm::nccl_library_missing;
#endif
  zt::comm::nccl_entries().install(nccl);
}
