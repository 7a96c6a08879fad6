// CUDA causal attention: strided-batched GEMMs over the heads of each batch row and the row
// kernels of attention_rows_cuda.cu, all in f32 (bf16 operands are widened to f32 workspace
// and results rounded once). The scores of every head, (B, nh, T, T_kv) f32 (T_kv >= T: Note
// [Longer key sequence]), are workspace freed before the call returns; what backward keeps is lse
// (B, nh, T), and it recomputes P. Head h of an operand is a (T, hs) matrix with row stride
// seq_stride (Note [Attention operands]); query head h = j group + g reads kv head j, so one
// batched GEMM per (batch row, g) covers every kv head j, and a kv head's gradient sums over g
// (beta = 1 after g = 0). Dropout on the probabilities (Note [Attention dropout] in
// nn/kernels/math/attention_dropout_math.h) is one more row kernel each way, in place on P.
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cuda/attention_rows_cuda.h"
#include "nn/kernels/cuda/cuda_backend_internal.h"
#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda::detail {
namespace {

// Widens every f32 copy from its operand's tensor (outputs too, so that rounding the copy
// back leaves any element outside the heads as it was).
void load(DeviceContext& device, const AttentionF32Bases& bases) {
  for (const AttentionF32Bases::Copy& copy : bases.copies()) {
    device.ops().cast(copy.original, copy.f32);
  }
}
// Rounds the outputs' copies into their tensors.
void store(DeviceContext& device, const AttentionF32Bases& bases) {
  for (const AttentionF32Bases::Copy& copy : bases.copies()) {
    if (copy.is_output) device.ops().cast(copy.f32, copy.original);
  }
}

// The per-head matrices of one operand: head h of batch row b starts at
// data + b batch_stride + h head_stride, rows ld apart. per_query_head: indexed by query
// head (q, o, dO, dq, scores), else by kv head (k, v, dk, dv).
struct HeadMatrices {
  float* data;
  std::int64_t ld;
  std::int64_t batch_stride;
  std::int64_t head_stride;
  bool per_query_head;
};

HeadMatrices matrices_of(const AttentionHeads& heads, bool per_query_head) {
  return {heads.base.data_as<float>() + heads.strides.offset, heads.strides.seq,
          heads.strides.batch, heads.strides.head, per_query_head};
}
// (B, nh, T, T_kv) scores, one (T, T_kv) matrix per query head
HeadMatrices scores_of(const Tensor& scores, const AttentionShape& shape) {
  const std::int64_t matrix = shape.seq_len * shape.kv_len;
  return {scores.data_as<float>(), shape.kv_len, shape.n_head * matrix, matrix, true};
}

// For every query head h of every batch row: c_h = alpha op(a_h) op(b_h) + beta c_h, where
// an operand indexed by kv head is read at kv head h / group. An output indexed by kv head
// (dk, dv) is written by its group's first query head and accumulated by the others.
struct HeadGemm {
  bool transpose_a;
  bool transpose_b;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
  float alpha;
};
void per_head_gemm(CublasHandle& handle, const AttentionShape& shape, const HeadGemm& op,
                   const HeadMatrices& a, const HeadMatrices& b, const HeadMatrices& c) {
  const std::int64_t group = shape.group();
  for (std::int64_t batch = 0; batch < shape.batch; ++batch) {
    for (std::int64_t g = 0; g < group; ++g) {
      // query head j group + g, kv head j, for j = 0 .. n_kv_head - 1
      const auto at = [&](const HeadMatrices& x) {
        return x.data + batch * x.batch_stride + (x.per_query_head ? g * x.head_stride : 0);
      };
      const auto stride = [&](const HeadMatrices& x) {
        return x.per_query_head ? group * x.head_stride : x.head_stride;
      };
      const float beta = !c.per_query_head && g > 0 ? 1.0f : 0.0f;
      gemm_strided_batched<float, float>(handle, op.transpose_a, op.transpose_b, op.m, op.n, op.k,
                                         op.alpha, at(a), a.ld, stride(a), at(b), b.ld, stride(b),
                                         beta, at(c), c.ld, stride(c), shape.n_kv_head);
    }
  }
}

}  // namespace

void attention_forward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                       const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                       const AttentionHeads& o, const Tensor& lse,
                       const math::DropoutMask* probs_dropout) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  check_attention_dropout(shape, probs_dropout);
  const std::int64_t t = shape.seq_len, kv_len = shape.kv_len, hs = shape.head_dim;
  WorkspaceAllocator workspace(
      device, attention_forward_workspace_request(AttentionPath::kRows, q, k, v, o));
  const AttentionForwardWorkspace ws = attention_forward_workspace(workspace, q, k, v, o);
  load(device, ws.bases);
  const HeadMatrices q32 = matrices_of(ws.q, true), k32 = matrices_of(ws.k, false);
  const HeadMatrices v32 = matrices_of(ws.v, false), o32 = matrices_of(ws.o, true);
  const HeadMatrices s = scores_of(ws.scores, shape);
  cublas.with_stream(workspace, stream, [&](CublasHandle& handle) {
    // S_h (T, T_kv) = scale q_h (T, hs) · k^T (hs, T_kv)
    per_head_gemm(handle, shape, {false, true, t, kv_len, hs, shape.scale()}, q32, k32, s);
  });
  attention_softmax_forward(s.data, lse.data_as<float>(), shape.batch * shape.n_head * t, t, kv_len,
                            stream);
  // P -> P ∘ Z, after lse took the undropped P in
  if (probs_dropout != nullptr) {
    attention_dropout_forward(s.data, *probs_dropout, shape.batch, shape.n_head, t, stream);
  }
  cublas.with_stream(workspace, stream, [&](CublasHandle& handle) {
    // o_h (T, hs) = P_h (T, T_kv) · v (T_kv, hs)
    per_head_gemm(handle, shape, {false, false, t, hs, kv_len, 1.0f}, s, v32, o32);
  });
  store(device, ws.bases);
  workspace.finish();
}

void attention_backward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                        const AttentionHeads& q, const AttentionHeads& k, const AttentionHeads& v,
                        const AttentionHeads& o, const Tensor& lse, const AttentionHeads& d_o,
                        const AttentionHeads& dq, const AttentionHeads& dk,
                        const AttentionHeads& dv, const math::DropoutMask* probs_dropout) {
  const AttentionShape shape = attention_shape_of(q, k, v, o, lse);
  check_attention_gradients(shape, d_o, dq, dk, dv);
  check_attention_dropout(shape, probs_dropout);
  const std::int64_t t = shape.seq_len, hs = shape.head_dim;
  const std::int64_t rows = shape.batch * shape.n_head * t;
  WorkspaceAllocator workspace(device, attention_backward_workspace_request(
                                           AttentionPath::kRows, q, k, v, o, d_o, dq, dk, dv));
  const AttentionBackwardWorkspace ws =
      attention_backward_workspace(workspace, q, k, v, o, d_o, dq, dk, dv);
  load(device, ws.bases);  // dq, dk and dv are written in full, but widened as outputs are
  const HeadMatrices q32 = matrices_of(ws.q, true), k32 = matrices_of(ws.k, false);
  const HeadMatrices v32 = matrices_of(ws.v, false), d_o32 = matrices_of(ws.d_o, true);
  const HeadMatrices dq32 = matrices_of(ws.dq, true), dk32 = matrices_of(ws.dk, false);
  const HeadMatrices dv32 = matrices_of(ws.dv, false);
  const HeadMatrices p = scores_of(ws.p, shape), ds = scores_of(ws.ds, shape);
  float* d = ws.d.data_as<float>();  // D = rowsum(dO ∘ O)
  cublas.with_stream(workspace, stream, [&](CublasHandle& handle) {
    // S_h (T, T) = scale q_h · k^T, turned into P below
    per_head_gemm(handle, shape, {false, true, t, t, hs, shape.scale()}, q32, k32, p);
  });
  attention_probabilities(p.data, lse.data_as<float>(), rows, t, stream);
  cublas.with_stream(workspace, stream, [&](CublasHandle& handle) {
    // dP_h (T, T) = dO_h · v^T
    per_head_gemm(handle, shape, {false, true, t, t, hs, 1.0f}, d_o32, v32, ds);
  });
  attention_output_dot(ws.o.base.data_as<float>(), ws.o.strides, ws.d_o.base.data_as<float>(),
                       ws.d_o.strides, shape.batch, shape.n_head, t, hs, d, stream);
  if (probs_dropout == nullptr) {
    attention_score_gradient(p.data, ds.data, d, rows, t, stream);
  } else {
    // dS = P ∘ (Z dPd - D), and P becomes P ∘ Z for dv
    attention_dropout_score_gradient(p.data, ds.data, d, *probs_dropout, shape.batch, shape.n_head,
                                     t, stream);
  }
  cublas.with_stream(workspace, stream, [&](CublasHandle& handle) {
    // dv (T, hs) (+)= P_h^T (T, T) · dO_h (T, hs)
    per_head_gemm(handle, shape, {true, false, t, hs, t, 1.0f}, p, d_o32, dv32);
    // dq_h (T, hs) = scale dS_h (T, T) · k (T, hs);  dk (+)= scale dS_h^T · q_h
    per_head_gemm(handle, shape, {false, false, t, hs, t, shape.scale()}, ds, k32, dq32);
    per_head_gemm(handle, shape, {true, false, t, hs, t, shape.scale()}, ds, q32, dk32);
  });
  store(device, ws.bases);
  workspace.finish();
}

}  // namespace zt::nn::cuda::detail
