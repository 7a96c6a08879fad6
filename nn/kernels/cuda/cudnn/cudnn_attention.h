// Causal attention on cuDNN's fused flash attention (SDPA) through the header-only cuDNN
// frontend: one cuDNN handle per GPU and a graph per AttentionGraphKey, built at its first
// call and kept (or refused: Note [cuDNN attention never ends a run]). Built only where
// cuDNN 9's headers and the frontend were found (ZT_HAVE_CUDNN); this header names no cuDNN
// type.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/device/device_context.h"
#include "nn/kernels/attention_graph_key.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn::cuda {

// "cuDNN 9.19.0 at build, 9.14.0 at run time" (CUDNN_VERSION, cudnnGetVersion).
std::string cudnn_versions();

// Note [cuDNN attention]
// cuDNN's SDPA computes the contract of KernelBackend::attention_forward/backward in one
// fused kernel each way, without the (B, nh, T, T) scores in memory: q, k, v, o and their
// gradients are (B, heads, T, head_dim) tensors with the AttentionHeads' strides permuted into
// cuDNN's (batch, head, seq, 1) order and their offsets folded into the data pointers; the
// causal mask is the diagonal band with right bound 0 aligned top-left; the scale 1/sqrt(hs)
// is passed by value; and the stats output, log Σ_j exp(S_tj) in natural log of the scaled
// scores as f32 (B, nh, T, 1), is the interface's lse (B, nh, T) as it stands. Grouped-query
// attention is cuDNN's "b (hk g)" head grouping: query head h reads kv head h / g, as ours.
// The backward is cuDNN's non-deterministic one (dQ accumulated with atomics), like the
// embedding and layer-norm gradients of the CUDA backend. Operands are bf16 or f16, with
// head_dim a multiple of 8 up to 128 (256 on Hopper). Workspace: Note [cuDNN attention
// workspace].
//
// Note [cuDNN attention never ends a run]
// Whether cuDNN takes a graph (its version, the GPU, the causal band, grouped-query backward,
// the head size) is known only once the graph is built, so building never throws: a graph
// cuDNN refuses (or a cuDNN that cannot be opened) is remembered with cuDNN's reason, and
// forward/backward return false for it, so that the backend runs that call, and every later
// call of that shape, on the rows kernels, with one warning per shape. check() builds the
// training step's graphs before step 1 (the runtime refuses an explicit runtime.attention =
// "cudnn" with the reason it returns); the graphs it builds are the cached ones the steps use,
// so only the evaluation and sampling shapes are built later, and those fall back alone. The
// two directions agree on lse, so a forward on one kernel and a backward on the other are
// still one computation.
class CudnnAttention {
 public:
  explicit CudnnAttention(int device_index);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // Builds the forward and backward graphs of a training step over `shape` in `dtype` (q, k
  // and v columns of one qkv tensor, as the attention layers split it). nullopt when cuDNN
  // took both, else cuDNN's reason.
  std::optional<std::string> check(const AttentionShape& shape, DType dtype);

  // false, having run nothing, when cuDNN refused this call's graph: run it elsewhere.
  bool forward(DeviceContext& device, void* stream, const AttentionHeads& q,
               const AttentionHeads& k, const AttentionHeads& v, const AttentionHeads& o,
               const Tensor& lse);
  bool backward(DeviceContext& device, void* stream, const AttentionHeads& q,
                const AttentionHeads& k, const AttentionHeads& v, const AttentionHeads& o,
                const Tensor& lse, const AttentionHeads& d_o, const AttentionHeads& dq,
                const AttentionHeads& dk, const AttentionHeads& dv);

 private:
  struct Graph;   // a built cuDNN frontend graph and the workspace it asks for
  struct Handle;  // the cuDNN handle, created at the first call (it needs the GPU)

  // The built graph, or null when cuDNN refused it (with a warning the first time, if `warn`).
  // Needs mutex_.
  const Graph* graph_for(const AttentionGraphKey& key, const AttentionShape& shape,
                         std::initializer_list<const AttentionHeads*> operands, bool warn = true);
  // The handle, opening cuDNN and creating it at the first call; null when either failed, with
  // the reason in handle_failure_. Needs mutex_.
  Handle* handle();

  int device_index_;
  std::mutex mutex_;  // guards handle_, handle_failure_, graphs_ and refused_, and the handle
  std::unique_ptr<Handle> handle_;
  std::optional<std::string> handle_failure_;
  std::map<AttentionGraphKey, std::unique_ptr<Graph>> graphs_;
  std::map<AttentionGraphKey, std::string> refused_;  // cuDNN's reason, per refused graph
};

}  // namespace zt::nn::cuda
