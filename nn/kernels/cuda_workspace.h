// The workspace the CUDA kernel backend's ops allocate, in the order they allocate it. The
// real backend (nn/kernels/cuda/) and its dry run on a meta device (cuda_dry_kernel_backend)
// both allocate through these functions, so the estimator's tracker sees the GPU's
// workspace exactly (Note [Dry kernels]). No CUDA header: this builds without the toolkit.
#pragma once

#include <cstdint>

#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"

namespace zt::nn::cuda {

// Note [cuBLAS workspace]
// Left alone, cuBLAS takes its GEMMs' scratch from a pool of its own (cudaMalloc'd per handle
// and stream: 32 MiB on Hopper), which no tracker sees. The backend instead hands each group
// of GEMMs that an op enqueues under the handle's lock a workspace of kCublasWorkspaceBytes
// from the context's tracker (cublasSetWorkspace, after cublasSetStream, which resets it):
// cuBLAS picks algorithms that fit in it, and the bytes count as workspace while the group
// is enqueued. Freeing it when the group has been enqueued is safe: the caching allocator
// hands the block out again on the same compute stream only (Note [Stream-ordered reuse]).
// 32 MiB is what NVIDIA recommends for Hopper (4 MiB for older GPUs), set on every GPU.
inline constexpr std::int64_t kCublasWorkspaceBytes = std::int64_t{32} << 20;

// The workspace of one group of GEMMs, live until the returned allocation is destroyed.
Allocation cublas_workspace(DeviceContext& device);

// The attention core computes in f32 (cuda_attention.cpp): each bf16 operand and result
// has an f32 workspace copy (an f32 tensor is its own), allocated in this order.
struct AttentionForwardWorkspace {
  Tensor qkv32;  // (B, T, 3C)
  Tensor att32;  // (B, nh, T, T)
  Tensor y32;    // (B, T, C)
};
AttentionForwardWorkspace attention_forward_workspace(DeviceContext& device, const Tensor& qkv,
                                                      const Tensor& att, const Tensor& y);

struct AttentionBackwardWorkspace {
  Tensor qkv32;    // (B, T, 3C)
  Tensor att32;    // (B, nh, T, T)
  Tensor dy32;     // (B, T, C)
  Tensor dqkv32;   // (B, T, 3C)
  Tensor scratch;  // (B, nh, T, T) f32 always: dP and then dS of every head
};
AttentionBackwardWorkspace attention_backward_workspace(DeviceContext& device, const Tensor& qkv,
                                                        const Tensor& att, const Tensor& dy,
                                                        const Tensor& dqkv);

// The fused cross-entropy's per-row losses (rows) f32, summed on the host afterwards.
Tensor cross_entropy_losses_workspace(DeviceContext& device, std::int64_t rows);

}  // namespace zt::nn::cuda
