// The workspace the CUDA kernel backend's ops allocate, in the order they allocate it: each
// op's request is a pure host function of its shapes, dtypes and attention path (Note
// [Workspace requests]), which the real backend (nn/kernels/cuda/) allocates through a
// WorkspaceAllocator and its dry run on a meta device (cuda_dry_kernel_backend) replays, so
// the estimator's tracker sees the GPU's workspace exactly (Note [Dry kernels]). No CUDA
// header: this builds without the toolkit, and the CPU tests call it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::nn::cuda {

// Note [Workspace requests]
// Every CUDA op that needs workspace states it as a WorkspaceRequest: the allocations it
// makes, in order, each with its use (which names it in the tracker), bytes, memory category
// and lifetime, computed on the host from the op's arguments by one function per op
// (gemm_workspace_request, linear_*_workspace_request, attention_*_workspace_request,
// cross_entropy_workspace_request below). Both backends call that function:
// - the real backend takes each allocation from a WorkspaceAllocator over the request, which
//   checks every take against the next entry (use and bytes) and, at finish(), that nothing
//   was left over, so a GPU op that allocates otherwise than its request says fails at once;
// - the dry backend replays the request (replay_workspace): the same allocations as meta
//   memory, in the same order, a transient one freed before the next is made.
// So what an op allocates is written once; the CPU test CudaWorkspaceRequests.* runs a whole
// GPT-2 small and Llama step through the dry backend and holds every workspace allocation to
// the requests of the ops it saw, and holds the builders the real backend takes its
// attention and cross-entropy workspace through to their requests on a meta device.
// What the real backend decides on the GPU at run time, and what the dry run replays:
// - cuBLASLt fused or unfused (Note [Fused when offered]): the unfused path runs the plain
//   GEMM in the op's same cuBLAS workspace and writes the bias gradient into the same f32
//   scratch, then its own bias/GELU kernels, which allocate nothing; both branches allocate
//   the same, so the request does not depend on the choice and the replay is exact.
// - cuDNN's plan workspace (Note [cuDNN attention workspace]): known once the graph is built;
//   the request takes graph_bytes, the real backend passes what its graph asks for, the dry
//   run 0, i.e. the bound, which each graph is built to fit (a larger ask is the GPU test's
//   failure, and the estimate would be short by the difference).
// - cuDNN or the rows kernels (AttentionPath): the real backend falls back to the rows
//   kernels for a shape cuDNN refuses (Note [cuDNN attention never ends a run]); the
//   training step's shapes are built and checked before step 1 (the run refuses to start
//   otherwise), so the dry run replays the cuDNN path the steps take, not the rows
//   fallback's larger workspace; only evaluation shapes built later could fall back.

enum class WorkspaceUse : std::uint8_t {
  kCublas,                  // a cuBLAS/cuBLASLt workspace (Note [cuBLAS workspace])
  kPreGeluBiasGrad,         // DGELU_BGRAD's f32 bias-gradient scratch
  kBiasGrad,                // BGRADB's f32 bias-gradient scratch
  kAttentionF32Copy,        // the f32 copy of a bf16 operand's base tensor
  kAttentionScores,         // the rows kernels' scores, and backward's D
  kCudnnAttentionForward,   // a cuDNN SDPA forward graph's workspace
  kCudnnAttentionBackward,  // a cuDNN SDPA backward graph's workspace
  kCrossEntropyLosses,      // per-row losses
  kCrossEntropyLossSum,     // their double sum
};
// The tracker's name for an allocation of `use` (a literal).
const char* workspace_use_name(WorkspaceUse use);

enum class WorkspaceLifetime : std::uint8_t {
  kOp,         // live until the op returns
  kTransient,  // freed before the op's next allocation (a GEMM group's, a bias scratch)
};

struct WorkspaceEntry {
  WorkspaceUse use;
  std::int64_t bytes;
  WorkspaceLifetime lifetime;
  MemoryCategory category = MemoryCategory::kWorkspace;

  const char* name() const { return workspace_use_name(use); }
  friend bool operator==(const WorkspaceEntry&, const WorkspaceEntry&) = default;
};
using WorkspaceRequest = std::vector<WorkspaceEntry>;

// Hands out the allocations of one op's request in order, from `device`'s tracker, each
// under its use's name. Not thread-safe: one op's thread uses it.
class WorkspaceAllocator {
 public:
  WorkspaceAllocator(DeviceContext& device, WorkspaceRequest request);

  // The next entry's allocation; it must be of `use` (ZT_CHECK otherwise).
  Allocation next(WorkspaceUse use);
  // The same as an uninitialized f32 tensor of `shape`, whose bytes must be the entry's.
  Tensor next_f32(WorkspaceUse use, const Shape& shape);
  // Checks that every entry was taken.
  void finish() const;

  const WorkspaceRequest& request() const { return request_; }

 private:
  const WorkspaceEntry& take(WorkspaceUse use);

  DeviceContext& device_;
  WorkspaceRequest request_;
  std::size_t taken_ = 0;
};

// The dry run of `request`: its allocations on `device` in order, each kTransient one freed
// before the next is made, the kOp ones when this returns.
void replay_workspace(DeviceContext& device, const WorkspaceRequest& request);

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

// cuBLASLt's GELU epilogues need the aux (pre-activation) matrix's row stride to be a
// multiple of 8; a fused GELU over `features` columns of another width runs the element-wise
// GELU kernels after the GEMM instead (and then needs no bias-gradient scratch).
constexpr bool gelu_fuses_into_gemm(std::int64_t features) { return features % 8 == 0; }

// gemm: one GEMM group (a transient cuBLAS workspace).
WorkspaceRequest gemm_workspace_request();
// linear_forward: one cuBLAS workspace for the op's GEMM; the bias and GELU epilogues, or the
// GELU kernel after the GEMM for widths cuBLASLt cannot fuse, need none.
WorkspaceRequest linear_forward_workspace_request();
// linear_backward (its arguments of the same names): one cuBLAS workspace for the dx and
// dweight GEMMs, and while it lives, each freed after its GEMM, the f32 bias-gradient scratch
// of each GEMM whose epilogue writes one: first (in_features) when x_pre_gelu_dbias is defined
// and the GELU fuses (DGELU_BGRAD on dx), then (out_features) when dbias is (BGRADB on
// dweight).
WorkspaceRequest linear_backward_workspace_request(const Tensor& weight, const Tensor& dbias,
                                                   const Tensor& x_pre_gelu,
                                                   const Tensor& x_pre_gelu_dbias);

// Which kernels an attention op runs (Note [cuDNN attention]): cuDNN's SDPA for bf16
// operands of equal lengths when runtime.attention chose it, the rows kernels otherwise.
enum class AttentionPath : std::uint8_t { kRows, kCudnn };
AttentionPath attention_path(CudaAttention attention, const AttentionHeads& q,
                             const AttentionHeads& k);

// The attention core on the rows kernels computes in f32 (cuda_attention.cpp). Each operand
// that is not f32 is read through an f32 copy of its whole base tensor, made once per base
// (q, k and v of one qkv share a copy) and addressed with the operand's own strides; an f32
// operand is its own. Outputs get copies too, widened on entry and rounded back at the end,
// so that elements outside the heads keep their values. The copies are allocated in operand
// order, the scores after them, and all of it lives until the op returns; the GEMM groups'
// transient cuBLAS workspaces come after. With cuDNN: the bound of Note [cuDNN attention
// workspace], or graph_bytes when the built graph asks for more.
//   forward:  the f32 q, k, v and o, the scores (B, nh, T, T_kv) f32, two GEMM groups;
//   backward: the f32 o, d_o, q, k, v, dq, dk and dv, P and dS (B, nh, T, T) f32,
//             D = rowsum(dO ∘ O) (B, nh, T) f32, three GEMM groups.
WorkspaceRequest attention_forward_workspace_request(AttentionPath path, const AttentionHeads& q,
                                                     const AttentionHeads& k,
                                                     const AttentionHeads& v,
                                                     const AttentionHeads& o,
                                                     std::int64_t cudnn_graph_bytes = 0);
WorkspaceRequest attention_backward_workspace_request(
    AttentionPath path, const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
    const AttentionHeads& o, const AttentionHeads& d_o, const AttentionHeads& dq,
    const AttentionHeads& dk, const AttentionHeads& dv, std::int64_t cudnn_graph_bytes = 0);

// The rows kernels' f32 copies, made as the request above says.
class AttentionF32Bases {
 public:
  struct Copy {
    Tensor original;
    Tensor f32;  // original's shape, f32; uninitialized until the backend widens it
    bool is_output;
  };

  // `heads` with its base replaced by the f32 copy of that base (taken from `workspace` at
  // the first operand that reads it), or `heads` itself when it is f32.
  AttentionHeads add(WorkspaceAllocator& workspace, const AttentionHeads& heads, bool is_output);
  const std::vector<Copy>& copies() const { return copies_; }

 private:
  std::vector<Copy> copies_;
};

// attention_forward's buffers on the rows kernels, taken from `workspace` (over the forward
// request): the f32 copies and the scores; the GEMM groups' workspaces are left to take.
struct AttentionForwardWorkspace {
  AttentionF32Bases bases;
  AttentionHeads q, k, v, o;  // f32
  Tensor scores;              // (B, nh, T, T_kv) f32: S, then P in place
};
AttentionForwardWorkspace attention_forward_workspace(WorkspaceAllocator& workspace,
                                                      const AttentionHeads& q,
                                                      const AttentionHeads& k,
                                                      const AttentionHeads& v,
                                                      const AttentionHeads& o);

// attention_backward's, likewise.
struct AttentionBackwardWorkspace {
  AttentionF32Bases bases;
  AttentionHeads o, d_o, q, k, v, dq, dk, dv;  // f32
  Tensor p;                                    // (B, nh, T, T) f32: S, then P in place
  Tensor ds;                                   // (B, nh, T, T) f32: dP, then dS in place
  Tensor d;                                    // (B, nh, T) f32
};
AttentionBackwardWorkspace attention_backward_workspace(
    WorkspaceAllocator& workspace, const AttentionHeads& q, const AttentionHeads& k,
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
// One cuDNN attention op's request: max(bound, graph_bytes) bytes. The dry run passes
// graph_bytes = 0; the real backend what its built graph asks for.
WorkspaceRequest cudnn_attention_workspace_request(const AttentionShape& shape, bool backward,
                                                   std::int64_t graph_bytes);
// Its allocation, as the request says.
Allocation cudnn_attention_workspace(DeviceContext& device, const AttentionShape& shape,
                                     bool backward, std::int64_t graph_bytes);

// The fused cross-entropy over `rows` rows: the per-row losses (rows) f32 and their double
// sum (the bytes of one double), which stay on the device; only the sum is copied to the host.
WorkspaceRequest cross_entropy_workspace_request(std::int64_t rows);
struct CrossEntropyWorkspace {
  Tensor losses;      // (rows) f32
  Tensor device_sum;  // (2) f32: a double's bytes
};
CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows);

}  // namespace zt::nn::cuda
