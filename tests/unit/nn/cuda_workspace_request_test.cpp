// Note [Workspace requests]: the requests are pure host functions of the op's arguments; the
// builders the real CUDA backend takes its attention and cross-entropy workspace through
// consume exactly their requests (checked here on a meta GPU, since they build without
// CUDA), and the allocator refuses a backend that takes otherwise.
#include <gtest/gtest.h>

#include <string>

#include "core/device/meta_device.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda {
namespace {

Tensor make(DeviceContext& d, Shape shape, DType dtype) {
  return Tensor::zeros(shape, dtype, d.tracker(), MemoryCategory::kActivations);
}

// Grouped-query attention over one fused qkv: 4 query heads, 2 kv heads of 16, T = 5.
struct AttentionOperands {
  AttentionOperands(DeviceContext& d, DType t)
      : qkv(make(d, Shape{2, 5, 128}, t)),
        dqkv(make(d, qkv.shape(), t)),
        y(make(d, Shape{2, 5, 64}, t)),
        dy(make(d, y.shape(), t)),
        x(split_qkv(qkv, 4, 2)),
        dx(split_qkv(dqkv, 4, 2)),
        o(AttentionHeads::packed(y, 4)),
        d_o(AttentionHeads::packed(dy, 4)) {}
  Tensor qkv, dqkv, y, dy;
  QkvHeads x, dx;
  AttentionHeads o, d_o;
};

TEST(CudaWorkspaceRequests, RowsAttentionCopiesEachBf16BaseOnceThenScoresThenGemmGroups) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  const AttentionOperands a(*meta, DType::kBF16);
  const WorkspaceRequest forward =
      attention_forward_workspace_request(AttentionPath::kRows, a.x.q, a.x.k, a.x.v, a.o);
  // qkv's copy (q, k and v share it), y's copy, the scores, two GEMM groups.
  ASSERT_EQ(forward.size(), 5u);
  EXPECT_EQ(forward[0], (WorkspaceEntry{WorkspaceUse::kAttentionF32Copy, 2 * 5 * 128 * 4,
                                        WorkspaceLifetime::kOp}));
  EXPECT_EQ(forward[1], (WorkspaceEntry{WorkspaceUse::kAttentionF32Copy, 2 * 5 * 64 * 4,
                                        WorkspaceLifetime::kOp}));
  EXPECT_EQ(forward[2], (WorkspaceEntry{WorkspaceUse::kAttentionScores, 2 * 4 * 5 * 5 * 4,
                                        WorkspaceLifetime::kOp}));
  for (std::size_t i : {3u, 4u}) {
    EXPECT_EQ(forward[i], (WorkspaceEntry{WorkspaceUse::kCublas, kCublasWorkspaceBytes,
                                          WorkspaceLifetime::kTransient}));
  }
  // f32 operands are their own: the scores and the GEMM groups only.
  const AttentionOperands f(*meta, DType::kF32);
  EXPECT_EQ(
      attention_forward_workspace_request(AttentionPath::kRows, f.x.q, f.x.k, f.x.v, f.o).size(),
      3u);
  // Backward: y, dy, qkv, dqkv copies; P, dS, D; three GEMM groups.
  const WorkspaceRequest backward = attention_backward_workspace_request(
      AttentionPath::kRows, a.x.q, a.x.k, a.x.v, a.o, a.d_o, a.dx.q, a.dx.k, a.dx.v);
  ASSERT_EQ(backward.size(), 10u);
  EXPECT_EQ(backward[6].bytes, 2 * 4 * 5 * 4);
}

TEST(CudaWorkspaceRequests, RealBackendAttentionBuildersTakeExactlyTheirRequest) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  for (DType t : {DType::kBF16, DType::kF32}) {
    SCOPED_TRACE(dtype_name(t));
    const AttentionOperands a(*meta, t);
    {
      // As cuda_attention.cpp: the buffers, then two GEMM groups.
      WorkspaceAllocator workspace(*meta, attention_forward_workspace_request(
                                              AttentionPath::kRows, a.x.q, a.x.k, a.x.v, a.o));
      const AttentionForwardWorkspace ws =
          attention_forward_workspace(workspace, a.x.q, a.x.k, a.x.v, a.o);
      EXPECT_EQ(ws.bases.copies().size(), t == DType::kF32 ? 0u : 2u);
      for (int group = 0; group < 2; ++group) workspace.next(WorkspaceUse::kCublas);
      EXPECT_NO_THROW(workspace.finish());
    }
    {
      WorkspaceAllocator workspace(
          *meta, attention_backward_workspace_request(AttentionPath::kRows, a.x.q, a.x.k, a.x.v,
                                                      a.o, a.d_o, a.dx.q, a.dx.k, a.dx.v));
      const AttentionBackwardWorkspace ws = attention_backward_workspace(
          workspace, a.x.q, a.x.k, a.x.v, a.o, a.d_o, a.dx.q, a.dx.k, a.dx.v);
      EXPECT_EQ(ws.bases.copies().size(), t == DType::kF32 ? 0u : 4u);
      for (int group = 0; group < 3; ++group) workspace.next(WorkspaceUse::kCublas);
      EXPECT_NO_THROW(workspace.finish());
    }
  }
  EXPECT_EQ(meta->tracker().current_bytes(MemoryCategory::kWorkspace), 0);
}

TEST(CudaWorkspaceRequests, LinearBackwardScratchFollowsTheEpilogues) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  DeviceContext& d = *meta;
  const Tensor none;
  for (const std::int64_t in_features : {std::int64_t{16}, std::int64_t{12}}) {
    SCOPED_TRACE(in_features);
    const Tensor weight = make(d, Shape{3, in_features}, DType::kBF16);
    const Tensor dbias = make(d, Shape{3}, DType::kF32);
    const Tensor pre = make(d, Shape{6, in_features}, DType::kBF16);
    const Tensor pre_dbias = make(d, Shape{in_features}, DType::kF32);
    const WorkspaceRequest request =
        linear_backward_workspace_request(weight, dbias, pre, pre_dbias);
    WorkspaceRequest expected = {
        {WorkspaceUse::kCublas, kCublasWorkspaceBytes, WorkspaceLifetime::kOp}};
    // DGELU_BGRAD's scratch only where cuBLASLt fuses the GELU (in_features % 8 == 0).
    if (in_features % 8 == 0) {
      expected.push_back(
          {WorkspaceUse::kPreGeluBiasGrad, in_features * 4, WorkspaceLifetime::kTransient});
    }
    expected.push_back({WorkspaceUse::kBiasGrad, 3 * 4, WorkspaceLifetime::kTransient});
    EXPECT_EQ(request, expected);
    EXPECT_EQ(linear_backward_workspace_request(weight, none, none, none).size(), 1u);
  }
}

TEST(CudaWorkspaceRequests, AllocatorRefusesAnOpThatTakesOtherwiseThanItsRequest) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  const Tensor weight = make(*meta, Shape{3, 16}, DType::kBF16);
  const Tensor dbias = make(*meta, Shape{3}, DType::kF32);
  const WorkspaceRequest request = linear_backward_workspace_request(weight, dbias, {}, {});
  {
    WorkspaceAllocator out_of_order(*meta, request);
    EXPECT_THROW(out_of_order.next(WorkspaceUse::kBiasGrad), InternalError);
  }
  {
    WorkspaceAllocator wrong_size(*meta, request);
    const Allocation cublas = wrong_size.next(WorkspaceUse::kCublas);
    EXPECT_THROW(wrong_size.next_f32(WorkspaceUse::kBiasGrad, Shape{4}), InternalError);
  }
  {
    WorkspaceAllocator left_over(*meta, request);
    const Allocation cublas = left_over.next(WorkspaceUse::kCublas);
    EXPECT_THROW(left_over.finish(), InternalError);
    const Tensor scratch = left_over.next_f32(WorkspaceUse::kBiasGrad, Shape{3});
    EXPECT_NO_THROW(left_over.finish());
    EXPECT_THROW(left_over.next(WorkspaceUse::kCublas), InternalError);
  }
}

TEST(CudaWorkspaceRequests, CudnnAndCrossEntropyAllocateTheirRequests) {
  const auto meta = make_meta_device_context(Device::cuda(0));
  const AttentionShape shape{2, 64, 4, 2, 16, 64};
  meta->tracker().reset_peaks();
  {
    // A built graph that asks for more than the bound gets what it asks for.
    const Allocation forward = cudnn_attention_workspace(*meta, shape, false, 1);
    EXPECT_EQ(forward.bytes(), kCudnnPlanWorkspaceBytes);
    const Allocation more =
        cudnn_attention_workspace(*meta, shape, false, kCudnnPlanWorkspaceBytes + 64);
    EXPECT_EQ(more.bytes(), kCudnnPlanWorkspaceBytes + 64);
  }
  {
    const CrossEntropyWorkspace ce = cross_entropy_workspace(*meta, 10);
    EXPECT_EQ(ce.losses.numel(), 10);
    EXPECT_EQ(meta->tracker().current_bytes(MemoryCategory::kWorkspace), 10 * 4 + 8);
  }
  std::int64_t bytes = 0;
  for (const WorkspaceEntry& e : cross_entropy_workspace_request(10)) bytes += e.bytes;
  EXPECT_EQ(bytes, 10 * 4 + 8);
}

}  // namespace
}  // namespace zt::nn::cuda
