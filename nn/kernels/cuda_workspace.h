// The workspace the CUDA kernel backend's ops allocate, in the order they allocate it. The
// real backend (nn/kernels/cuda/) and its dry run on a meta device (cuda_dry_kernel_backend)
// both allocate through these functions, so the estimator's tracker sees the GPU's
// workspace exactly (Note [Dry kernels]). No CUDA header: this builds without the toolkit.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"

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
// first, when x_pre_gelu_dbias is defined and the GELU fuses, x_pre_gelu's `in_features` f32
// (DGELU_BGRAD with an f32 bias type, or its unfused reduction), freed after the dx GEMM; then,
// when dbias is defined, `out_features` f32 (BGRADB), freed after the dweight GEMM.
Tensor dgelu_bias_grad_workspace(DeviceContext& device, std::int64_t in_features);
Tensor bias_grad_workspace(DeviceContext& device, std::int64_t out_features);

// The attention core computes in f32 (cuda_attention.cpp). Each operand that is not f32 is
// read through an f32 copy of its whole base tensor, made once per base (q, k and v of one
// qkv share a copy) and addressed with the operand's own strides; an f32 operand is its own.
// Outputs get copies too, widened on entry and rounded back at the end, so that elements
// outside the heads keep their values. The copies are allocated in operand order, the
// scratch after them, and all of it lives until the op returns.
class AttentionF32Bases {
 public:
  struct Copy {
    Tensor original;
    Tensor f32;  // original's shape, f32; uninitialized until the backend widens it
    bool is_output;
  };

  // `heads` with its base replaced by the f32 copy of that base (allocated at the first
  // operand that reads it), or `heads` itself when it is f32.
  AttentionHeads add(DeviceContext& device, const AttentionHeads& heads, bool is_output);
  const std::vector<Copy>& copies() const { return copies_; }

 private:
  std::vector<Copy> copies_;
};

// attention_forward: the f32 q, k, v and o (in that order), then the scores of every head.
struct AttentionForwardWorkspace {
  AttentionF32Bases bases;
  AttentionHeads q, k, v, o;  // f32
  Tensor scores;              // (B, nh, T, T_kv) f32: S, then P in place
};
AttentionForwardWorkspace attention_forward_workspace(DeviceContext& device,
                                                      const AttentionHeads& q,
                                                      const AttentionHeads& k,
                                                      const AttentionHeads& v,
                                                      const AttentionHeads& o);

// attention_backward: the f32 o, d_o, q, k, v, dq, dk and dv (in that order), then P, dS and
// D = rowsum(dO ∘ O).
struct AttentionBackwardWorkspace {
  AttentionF32Bases bases;
  AttentionHeads o, d_o, q, k, v, dq, dk, dv;  // f32
  Tensor p;                                    // (B, nh, T, T) f32: S, then P in place
  Tensor ds;                                   // (B, nh, T, T) f32: dP, then dS in place
  Tensor d;                                    // (B, nh, T) f32
};
AttentionBackwardWorkspace attention_backward_workspace(
    DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
    const AttentionHeads& v, const AttentionHeads& o, const AttentionHeads& d_o,
    const AttentionHeads& dq, const AttentionHeads& dk, const AttentionHeads& dv);

// Note [cuDNN attention workspace]
// cuDNN's SDPA graphs (runtime.attention = "cudnn", nn/kernels/cuda/cudnn/) say how much
// workspace they need only once built, and building needs the GPU, so the dry run cannot
// ask. Both backends allocate instead a bound computed from the shapes, one allocation per
// attention op, live while the graph is enqueued:
//   forward:  kCudnnPlanWorkspaceBytes;
//   backward: the frontend's own part for a non-deterministic backward (the f32 dQ
//             accumulator (B, nh, T, hs) and softmax_sum (B, nh, T) f32, as cudnn_frontend
//             1.x lays them out) plus kCudnnPlanWorkspaceBytes.
// Each graph is built with execution plans that need more than its bound deselected
// (deselect_workspace_greater_than), so the plan fits in the slack. Should a built graph
// still ask for more than the bound (a frontend that lays its workspace out otherwise), the
// real backend allocates what the graph asks, the estimate falls short by the difference, and
// the GPU test CudnnAttention.WorkspaceFitsTheBoundTheEstimatorReplays fails, naming both.
// The slack is an allowance, not a measurement: Hopper's flash kernels take little or no
// plan workspace (the GPU test prints the figures the machine's cuDNN asks for).
inline constexpr std::int64_t kCudnnPlanWorkspaceBytes = std::int64_t{4} << 20;

// The bound above for `shape` in bytes; backward or forward.
std::int64_t cudnn_attention_workspace_bytes(const AttentionShape& shape, bool backward);
// The workspace of one cuDNN attention op: max(bound, graph_bytes) bytes. The dry run passes
// graph_bytes = 0; the real backend what its built graph asks for.
Allocation cudnn_attention_workspace(DeviceContext& device, const AttentionShape& shape,
                                     bool backward, std::int64_t graph_bytes);

// The fused cross-entropy's workspace: the per-row losses (rows) f32 and their double sum
// (the bytes of one double), which stay on the device; only the sum is copied to the host.
struct CrossEntropyWorkspace {
  Tensor losses;      // (rows) f32
  Tensor device_sum;  // (2) f32: a double's bytes
};
CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows);

}  // namespace zt::nn::cuda
