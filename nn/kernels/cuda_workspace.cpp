// The CUDA backend's workspace requests (Note [Workspace requests]), the allocator the real
// backend takes them through, and their dry replay.
#include "nn/kernels/cuda_workspace.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "core/error.h"

namespace zt::nn::cuda {
namespace {

constexpr auto kF32Bytes = static_cast<std::int64_t>(sizeof(float));

std::int64_t f32_bytes(const Shape& shape) { return shape.numel() * kF32Bytes; }

WorkspaceEntry cublas_group() {
  return {WorkspaceUse::kCublas, kCublasWorkspaceBytes, WorkspaceLifetime::kTransient};
}

// Whether two operands read the same base tensor (q, k and v of one qkv do).
bool same_base(const Tensor& a, const Tensor& b) {
  return a.data() == b.data() && a.numel() == b.numel();
}

// The f32 copies of `operands`' non-f32 bases, one per distinct base, in operand order.
template <std::size_t N>
void add_f32_copies(const std::array<const AttentionHeads*, N>& operands,
                    WorkspaceRequest& request) {
  std::vector<const Tensor*> copied;
  for (const AttentionHeads* heads : operands) {
    const Tensor& base = heads->base;
    if (base.dtype() == DType::kF32) continue;
    if (std::any_of(copied.begin(), copied.end(),
                    [&](const Tensor* seen) { return same_base(*seen, base); })) {
      continue;
    }
    copied.push_back(&base);
    request.push_back(
        {WorkspaceUse::kAttentionF32Copy, f32_bytes(base.shape()), WorkspaceLifetime::kOp});
  }
}

WorkspaceEntry scores(const Shape& shape) {
  return {WorkspaceUse::kAttentionScores, f32_bytes(shape), WorkspaceLifetime::kOp};
}

AttentionShape shape_of(const AttentionHeads& q, const AttentionHeads& k) {
  return {q.batch, q.seq_len, q.n_heads, k.n_heads, q.head_dim, k.seq_len};
}

}  // namespace

const char* workspace_use_name(WorkspaceUse use) {
  switch (use) {
    case WorkspaceUse::kCublas:
      return "cuBLAS workspace";
    case WorkspaceUse::kPreGeluBiasGrad:
      return "Linear pre-GELU bias-gradient scratch";
    case WorkspaceUse::kBiasGrad:
      return "Linear bias-gradient scratch";
    case WorkspaceUse::kAttentionF32Copy:
      return "attention f32 workspace";
    case WorkspaceUse::kAttentionScores:
      return "attention scores";
    case WorkspaceUse::kCudnnAttentionForward:
      return "cuDNN attention forward workspace";
    case WorkspaceUse::kCudnnAttentionBackward:
      return "cuDNN attention backward workspace";
    case WorkspaceUse::kCrossEntropyLosses:
      return "cross-entropy losses";
    case WorkspaceUse::kCrossEntropyLossSum:
      return "cross-entropy loss sum";
  }
  return "workspace";
}

WorkspaceAllocator::WorkspaceAllocator(DeviceContext& device, WorkspaceRequest request)
    : device_(device), request_(std::move(request)) {}

const WorkspaceEntry& WorkspaceAllocator::take(WorkspaceUse use) {
  ZT_CHECK(taken_ < request_.size(), std::string("an op took a ") + workspace_use_name(use) +
                                         " its workspace request does not hold (" +
                                         std::to_string(request_.size()) + " entries)");
  const WorkspaceEntry& entry = request_[taken_];
  ZT_CHECK(entry.use == use, "an op took a " + std::string(workspace_use_name(use)) +
                                 " where its workspace request's entry " + std::to_string(taken_) +
                                 " is a " + entry.name());
  ++taken_;
  return entry;
}

Allocation WorkspaceAllocator::next(WorkspaceUse use) {
  const WorkspaceEntry& entry = take(use);
  const ScopedAllocationName name(entry.name());
  return device_.tracker().allocate(entry.bytes, entry.category, Fill::kUninitialized);
}

Tensor WorkspaceAllocator::next_f32(WorkspaceUse use, const Shape& shape) {
  const WorkspaceEntry& entry = take(use);
  ZT_CHECK(f32_bytes(shape) == entry.bytes,
           std::string("an op took its ") + entry.name() + " as f32 " + shape.to_string() +
               " where its workspace request says " + std::to_string(entry.bytes) + " bytes");
  const ScopedAllocationName name(entry.name());
  return Tensor::empty(shape, DType::kF32, device_.tracker(), entry.category);
}

void WorkspaceAllocator::finish() const {
  ZT_CHECK(taken_ == request_.size(), "an op took " + std::to_string(taken_) + " of the " +
                                          std::to_string(request_.size()) +
                                          " allocations of its workspace request");
}

void replay_workspace(DeviceContext& device, const WorkspaceRequest& request) {
  std::vector<Allocation> live;  // the kOp entries, freed last-made first
  for (const WorkspaceEntry& entry : request) {
    const ScopedAllocationName name(entry.name());
    Allocation allocation =
        device.tracker().allocate(entry.bytes, entry.category, Fill::kUninitialized);
    if (entry.lifetime == WorkspaceLifetime::kOp) live.push_back(std::move(allocation));
  }
  while (!live.empty()) live.pop_back();
}

WorkspaceRequest gemm_workspace_request() { return {cublas_group()}; }

WorkspaceRequest linear_forward_workspace_request() {
  return {{WorkspaceUse::kCublas, kCublasWorkspaceBytes, WorkspaceLifetime::kOp}};
}

WorkspaceRequest linear_backward_workspace_request(const Tensor& weight, const Tensor& dbias,
                                                   const Tensor& x_pre_gelu,
                                                   const Tensor& x_pre_gelu_dbias) {
  const std::int64_t out_features = weight.dim(0);
  const std::int64_t in_features = weight.dim(1);
  WorkspaceRequest request = linear_forward_workspace_request();
  if (x_pre_gelu.defined() && x_pre_gelu_dbias.defined() && gelu_fuses_into_gemm(in_features)) {
    request.push_back({WorkspaceUse::kPreGeluBiasGrad, f32_bytes(Shape{in_features}),
                       WorkspaceLifetime::kTransient});
  }
  if (dbias.defined()) {
    request.push_back(
        {WorkspaceUse::kBiasGrad, f32_bytes(Shape{out_features}), WorkspaceLifetime::kTransient});
  }
  return request;
}

AttentionPath attention_path(CudaAttention attention, const AttentionHeads& q,
                             const AttentionHeads& k) {
  return attention == CudaAttention::kCudnn && q.base.dtype() == DType::kBF16 &&
                 k.seq_len == q.seq_len
             ? AttentionPath::kCudnn
             : AttentionPath::kRows;
}

WorkspaceRequest attention_forward_workspace_request(AttentionPath path, const AttentionHeads& q,
                                                     const AttentionHeads& k,
                                                     const AttentionHeads& v,
                                                     const AttentionHeads& o,
                                                     std::int64_t cudnn_graph_bytes) {
  if (path == AttentionPath::kCudnn) {
    return cudnn_attention_workspace_request(shape_of(q, k), false, cudnn_graph_bytes);
  }
  WorkspaceRequest request;
  add_f32_copies(std::array{&q, &k, &v, &o}, request);
  request.push_back(scores(Shape{q.batch, q.n_heads, q.seq_len, k.seq_len}));
  request.push_back(cublas_group());  // S = q k^T
  request.push_back(cublas_group());  // o = P v
  return request;
}

WorkspaceRequest attention_backward_workspace_request(
    AttentionPath path, const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
    const AttentionHeads& o, const AttentionHeads& d_o, const AttentionHeads& dq,
    const AttentionHeads& dk, const AttentionHeads& dv, std::int64_t cudnn_graph_bytes) {
  if (path == AttentionPath::kCudnn) {
    return cudnn_attention_workspace_request(shape_of(q, k), true, cudnn_graph_bytes);
  }
  WorkspaceRequest request;
  add_f32_copies(std::array{&o, &d_o, &q, &k, &v, &dq, &dk, &dv}, request);
  const Shape p{q.batch, q.n_heads, q.seq_len, q.seq_len};
  request.push_back(scores(p));                                     // P
  request.push_back(scores(p));                                     // dS
  request.push_back(scores(Shape{q.batch, q.n_heads, q.seq_len}));  // D
  request.push_back(cublas_group());                                // S
  request.push_back(cublas_group());                                // dv and dP
  request.push_back(cublas_group());                                // dq and dk
  return request;
}

AttentionHeads AttentionF32Bases::add(WorkspaceAllocator& workspace, const AttentionHeads& heads,
                                      bool is_output) {
  if (heads.base.dtype() == DType::kF32) return heads;
  AttentionHeads widened = heads;
  for (Copy& copy : copies_) {
    if (same_base(copy.original, heads.base)) {
      copy.is_output = copy.is_output || is_output;
      widened.base = copy.f32;
      return widened;
    }
  }
  Tensor f32 = workspace.next_f32(WorkspaceUse::kAttentionF32Copy, heads.base.shape());
  copies_.push_back({heads.base, f32, is_output});
  widened.base = f32;
  return widened;
}

AttentionForwardWorkspace attention_forward_workspace(WorkspaceAllocator& workspace,
                                                      const AttentionHeads& q,
                                                      const AttentionHeads& k,
                                                      const AttentionHeads& v,
                                                      const AttentionHeads& o) {
  AttentionForwardWorkspace ws;
  ws.q = ws.bases.add(workspace, q, false);
  ws.k = ws.bases.add(workspace, k, false);
  ws.v = ws.bases.add(workspace, v, false);
  ws.o = ws.bases.add(workspace, o, true);
  ws.scores = workspace.next_f32(WorkspaceUse::kAttentionScores,
                                 Shape{q.batch, q.n_heads, q.seq_len, k.seq_len});
  return ws;
}

AttentionBackwardWorkspace attention_backward_workspace(
    WorkspaceAllocator& workspace, const AttentionHeads& q, const AttentionHeads& k,
    const AttentionHeads& v, const AttentionHeads& o, const AttentionHeads& d_o,
    const AttentionHeads& dq, const AttentionHeads& dk, const AttentionHeads& dv) {
  AttentionBackwardWorkspace ws;
  ws.o = ws.bases.add(workspace, o, false);
  ws.d_o = ws.bases.add(workspace, d_o, false);
  ws.q = ws.bases.add(workspace, q, false);
  ws.k = ws.bases.add(workspace, k, false);
  ws.v = ws.bases.add(workspace, v, false);
  ws.dq = ws.bases.add(workspace, dq, true);
  ws.dk = ws.bases.add(workspace, dk, true);
  ws.dv = ws.bases.add(workspace, dv, true);
  const Shape scores{q.batch, q.n_heads, q.seq_len, q.seq_len};
  ws.p = workspace.next_f32(WorkspaceUse::kAttentionScores, scores);
  ws.ds = workspace.next_f32(WorkspaceUse::kAttentionScores, scores);
  ws.d = workspace.next_f32(WorkspaceUse::kAttentionScores, Shape{q.batch, q.n_heads, q.seq_len});
  return ws;
}

std::int64_t cudnn_attention_workspace_bytes(const AttentionShape& shape, bool backward) {
  if (!backward) return kCudnnPlanWorkspaceBytes;
  const std::int64_t query_rows = shape.batch * shape.n_head * shape.seq_len;
  const std::int64_t dq_accumulator = query_rows * shape.head_dim * kF32Bytes;
  const std::int64_t softmax_sum = query_rows * kF32Bytes;
  return dq_accumulator + softmax_sum + kCudnnPlanWorkspaceBytes;
}

WorkspaceRequest cudnn_attention_workspace_request(const AttentionShape& shape, bool backward,
                                                   std::int64_t graph_bytes) {
  return {{backward ? WorkspaceUse::kCudnnAttentionBackward : WorkspaceUse::kCudnnAttentionForward,
           std::max(cudnn_attention_workspace_bytes(shape, backward), graph_bytes),
           WorkspaceLifetime::kOp}};
}

Allocation cudnn_attention_workspace(DeviceContext& device, const AttentionShape& shape,
                                     bool backward, std::int64_t graph_bytes) {
  WorkspaceAllocator workspace(device,
                               cudnn_attention_workspace_request(shape, backward, graph_bytes));
  Allocation allocation = workspace.next(backward ? WorkspaceUse::kCudnnAttentionBackward
                                                  : WorkspaceUse::kCudnnAttentionForward);
  workspace.finish();
  return allocation;
}

WorkspaceRequest cross_entropy_workspace_request(std::int64_t rows) {
  return {{WorkspaceUse::kCrossEntropyLosses, f32_bytes(Shape{rows}), WorkspaceLifetime::kOp},
          {WorkspaceUse::kCrossEntropyLossSum, f32_bytes(Shape{2}), WorkspaceLifetime::kOp}};
}

CrossEntropyWorkspace cross_entropy_workspace(DeviceContext& device, std::int64_t rows) {
  WorkspaceAllocator workspace(device, cross_entropy_workspace_request(rows));
  CrossEntropyWorkspace buffers;
  buffers.losses = workspace.next_f32(WorkspaceUse::kCrossEntropyLosses, Shape{rows});
  buffers.device_sum = workspace.next_f32(WorkspaceUse::kCrossEntropyLossSum, Shape{2});
  workspace.finish();
  return buffers;
}

}  // namespace zt::nn::cuda
