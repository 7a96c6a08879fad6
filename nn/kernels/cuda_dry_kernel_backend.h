// The CUDA kernel backend run dry (Note [Dry kernels]): what a meta device standing for a GPU
// computes with, so that the estimator sees the CUDA backend's workspace, not the CPU's.
#pragma once

#include "nn/kernels/kernel_backend.h"

namespace zt::nn::cuda {

// Each op replays the workspace request of the CUDA backend's op (Note [Workspace requests]
// in cuda_workspace.h): the same allocations, order and lifetimes, and computes nothing: its
// tensors are meta.
// `attention` is the CUDA backend's attention choice whose workspace it replays.
const KernelBackend& cuda_dry_kernel_backend(CudaAttention attention = CudaAttention::kRows);

}  // namespace zt::nn::cuda
