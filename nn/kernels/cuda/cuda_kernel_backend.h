// The CUDA kernel backend: cuBLAS GEMMs (bf16 operands on tensor cores, fp32 accumulation)
// and the kernels of nn/kernels/cuda, enqueued on the DeviceContext's compute stream.
#pragma once

#include "nn/kernels/kernel_backend.h"

namespace zt::nn::cuda {

// The backend of GPU `device_index`, created at its first use (its cuBLAS handle at its first
// GEMM, which needs the GPU) and kept for the process.
const KernelBackend& cuda_kernel_backend(int device_index);

}  // namespace zt::nn::cuda
