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
// cuBLASLt (the Linear ops' epilogues, Note [GELU in the GEMMs]) takes its workspace per call
// rather than per handle: a linear_forward or linear_backward allocates one workspace first,
// holds it for the whole op and hands the same bytes to each of its GEMMs, so one Linear op
// holds kCublasWorkspaceBytes, never two of them, whichever library runs its GEMMs.
inline constexpr std::int64_t kCublasWorkspaceBytes = std::int64_t{32} << 20;

// The workspace of one group of GEMMs (or of one Linear op), live until the returned
// allocation is destroyed.
Allocation cublas_workspace(DeviceContext& device);

// cuBLASLt's GELU epilogues need the aux (pre-activation) matrix's row stride to be a
// multiple of 8; a fused GELU over `features` columns of another width runs the element-wise
// GELU kernels after the GEMM instead (and then needs no bias-gradient scratch).
constexpr bool gelu_fuses_into_gemm(std::int64_t features) { return features % 8 == 0; }

// cuBLASLt writes a bias gradient where the interface accumulates it (Note [GELU in the
// GEMMs]), so linear_backward, while its cublas_workspace is live, allocates scratch for it:
// first, when x_pre_gelu_dbias is defined and the GELU fuses, x_pre_gelu's `in_features` in
// the compute dtype (DGELU_BGRAD writes dx's type), freed after the dx GEMM; then, when dbias
// is defined, `out_features` f32 (BGRADB), freed after the dweight GEMM.
Tensor dgelu_bias_grad_workspace(DeviceContext& device, std::int64_t in_features, DType dtype);
Tensor bias_grad_workspace(DeviceContext& device, std::int64_t out_features);

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

// The fused cross-entropy's workspace: the per-row losses (rows) f32 and their double sum
// (the bytes of one double), which stay on the device; only the sum is copied to the host.
struct CrossEntropyWorkspace {
  Tensor losses;      // (rows) f32
  Tensor device_sum;  // (2) f32: a double's bytes
};
CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows);

}  // namespace zt::nn::cuda
