// Causal attention on cuDNN's fused flash attention (SDPA) through the header-only cuDNN
// frontend: one cuDNN handle per GPU and a graph per AttentionGraphKey, built at its first
// call and kept. Built only where cuDNN 9 and the frontend were found (ZT_HAVE_CUDNN); this
// header names no cuDNN type.
#pragma once

#include <map>
#include <memory>
#include <mutex>
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
// head_dim a multiple of 8 up to 128 (256 on Hopper); shapes cuDNN refuses fail with an Error
// naming the shape and runtime.attention. Workspace: Note [cuDNN attention workspace].
class CudnnAttention {
 public:
  explicit CudnnAttention(int device_index);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  void forward(DeviceContext& device, void* stream, const AttentionHeads& q,
               const AttentionHeads& k, const AttentionHeads& v, const AttentionHeads& o,
               const Tensor& lse);
  void backward(DeviceContext& device, void* stream, const AttentionHeads& q,
                const AttentionHeads& k, const AttentionHeads& v, const AttentionHeads& o,
                const Tensor& lse, const AttentionHeads& d_o, const AttentionHeads& dq,
                const AttentionHeads& dk, const AttentionHeads& dv);

 private:
  struct Graph;   // a built cuDNN frontend graph and the workspace it asks for
  struct Handle;  // the cuDNN handle, created at the first call (it needs the GPU)

  const Graph& graph_for(const AttentionGraphKey& key, const AttentionShape& shape,
                         std::initializer_list<const AttentionHeads*> operands);

  int device_index_;
  std::mutex mutex_;  // guards handle_ and graphs_, and each use of the handle
  std::unique_ptr<Handle> handle_;
  std::map<AttentionGraphKey, std::unique_ptr<Graph>> graphs_;
};

}  // namespace zt::nn::cuda
