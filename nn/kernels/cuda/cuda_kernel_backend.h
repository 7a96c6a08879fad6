// The CUDA kernel backend: cuBLAS GEMMs (bf16 operands on tensor cores, fp32 accumulation)
// and the kernels of nn/kernels/cuda, enqueued on the DeviceContext's compute stream.
#pragma once

#include <optional>
#include <string>

#include "nn/kernels/attention_heads.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn::cuda {

// The backend of GPU `device_index` with `attention`'s kernels, created at its first use (its
// cuBLAS and cuDNN handles at their first call, which needs the GPU) and kept for the process.
// kCudnn only in a build with the cuDNN attention (kernel_backend_for checks).
const KernelBackend& cuda_kernel_backend(int device_index, CudaAttention attention);

// Builds the cuDNN graphs of a training step over `shape` for the kCudnn backend of GPU
// `device_index` (Note [cuDNN attention never ends a run]): nullopt when cuDNN took them, else
// its reason. Only in a build with the cuDNN attention.
std::optional<std::string> cudnn_attention_check(int device_index, const AttentionShape& shape,
                                                 DType dtype);

}  // namespace zt::nn::cuda
