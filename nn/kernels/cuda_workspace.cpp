// The CUDA backend's workspace allocations, shared by the real backend and its dry run.
#include "nn/kernels/cuda_workspace.h"

#include <algorithm>

namespace zt::nn::cuda {
namespace {

// An uninitialized f32 workspace tensor.
Tensor f32_workspace(DeviceContext& device, const Shape& shape) {
  return Tensor::empty(shape, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
}

}  // namespace

Allocation cublas_workspace(DeviceContext& device) {
  const ScopedAllocationName name("cuBLAS workspace");
  return device.tracker().allocate(kCublasWorkspaceBytes, MemoryCategory::kWorkspace,
                                   Fill::kUninitialized);
}

Tensor dgelu_bias_grad_workspace(DeviceContext& device, std::int64_t in_features) {
  const ScopedAllocationName name("Linear pre-GELU bias-gradient scratch");
  return f32_workspace(device, Shape{in_features});
}

Tensor bias_grad_workspace(DeviceContext& device, std::int64_t out_features) {
  const ScopedAllocationName name("Linear bias-gradient scratch");
  return Tensor::empty(Shape{out_features}, DType::kF32, device.tracker(),
                       MemoryCategory::kWorkspace);
}

AttentionHeads AttentionF32Bases::add(DeviceContext& device, const AttentionHeads& heads,
                                      bool is_output) {
  if (heads.base.dtype() == DType::kF32) return heads;
  AttentionHeads widened = heads;
  for (Copy& copy : copies_) {
    if (copy.original.data() == heads.base.data() && copy.original.numel() == heads.base.numel()) {
      copy.is_output = copy.is_output || is_output;
      widened.base = copy.f32;
      return widened;
    }
  }
  Tensor f32 =
      Tensor::empty(heads.base.shape(), DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
  copies_.push_back({heads.base, f32, is_output});
  widened.base = f32;
  return widened;
}

AttentionForwardWorkspace attention_forward_workspace(DeviceContext& device,
                                                      const AttentionHeads& q,
                                                      const AttentionHeads& k,
                                                      const AttentionHeads& v,
                                                      const AttentionHeads& o) {
  AttentionForwardWorkspace ws;
  {
    const ScopedAllocationName name("attention f32 workspace");
    ws.q = ws.bases.add(device, q, false);
    ws.k = ws.bases.add(device, k, false);
    ws.v = ws.bases.add(device, v, false);
    ws.o = ws.bases.add(device, o, true);
  }
  const ScopedAllocationName name("attention scores");
  ws.scores = f32_workspace(device, Shape{q.batch, q.n_heads, q.seq_len, k.seq_len});
  return ws;
}

AttentionBackwardWorkspace attention_backward_workspace(
    DeviceContext& device, const AttentionHeads& q, const AttentionHeads& k,
    const AttentionHeads& v, const AttentionHeads& o, const AttentionHeads& d_o,
    const AttentionHeads& dq, const AttentionHeads& dk, const AttentionHeads& dv) {
  AttentionBackwardWorkspace ws;
  {
    const ScopedAllocationName name("attention f32 workspace");
    ws.o = ws.bases.add(device, o, false);
    ws.d_o = ws.bases.add(device, d_o, false);
    ws.q = ws.bases.add(device, q, false);
    ws.k = ws.bases.add(device, k, false);
    ws.v = ws.bases.add(device, v, false);
    ws.dq = ws.bases.add(device, dq, true);
    ws.dk = ws.bases.add(device, dk, true);
    ws.dv = ws.bases.add(device, dv, true);
  }
  const ScopedAllocationName name("attention scores");
  const Shape scores{q.batch, q.n_heads, q.seq_len, q.seq_len};
  ws.p = f32_workspace(device, scores);
  ws.ds = f32_workspace(device, scores);
  ws.d = f32_workspace(device, Shape{q.batch, q.n_heads, q.seq_len});
  return ws;
}

std::int64_t cudnn_attention_workspace_bytes(const AttentionShape& shape, bool backward) {
  if (!backward) return kCudnnPlanWorkspaceBytes;
  const std::int64_t query_rows = shape.batch * shape.n_head * shape.seq_len;
  const auto f32_bytes = static_cast<std::int64_t>(sizeof(float));
  const std::int64_t dq_accumulator = query_rows * shape.head_dim * f32_bytes;
  const std::int64_t softmax_sum = query_rows * f32_bytes;
  return dq_accumulator + softmax_sum + kCudnnPlanWorkspaceBytes;
}

Allocation cudnn_attention_workspace(DeviceContext& device, const AttentionShape& shape,
                                     bool backward, std::int64_t graph_bytes) {
  const ScopedAllocationName name(backward ? "cuDNN attention backward workspace"
                                           : "cuDNN attention forward workspace");
  const std::int64_t bytes =
      std::max(cudnn_attention_workspace_bytes(shape, backward), graph_bytes);
  return device.tracker().allocate(bytes, MemoryCategory::kWorkspace, Fill::kUninitialized);
}

CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows) {
  const ScopedAllocationName name("cross-entropy losses");
  CrossEntropyWorkspace workspace;
  workspace.losses =
      Tensor::empty(Shape{rows}, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
  workspace.device_sum =
      Tensor::empty(Shape{2}, DType::kF32, device.tracker(), MemoryCategory::kWorkspace);
  return workspace;
}

}  // namespace zt::nn::cuda
