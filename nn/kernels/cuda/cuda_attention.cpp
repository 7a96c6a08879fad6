// The CUDA attention core: for each batch row, one strided-batched GEMM over the heads per
// product, and the causal softmax kernels over all rows at once. Everything runs in f32, as
// the CPU path does: bf16 qkv, dy and att are widened to f32 workspace (cuda_workspace.h
// allocates it), and y, att and dqkv are rounded once. Head h of batch row b is the (T, hs)
// sub-matrix of qkv at column h hs with row stride 3C, so consecutive heads are hs apart.
#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cuda/causal_softmax_cuda.h"
#include "nn/kernels/cuda/cuda_backend_internal.h"
#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/cuda_workspace.h"

namespace zt::nn::cuda::detail {
namespace {

using Heads = AttentionHeads;

// Widens `src` into its f32 workspace copy (nothing when it is src itself).
void load(DeviceContext& device, const Tensor& src, const Tensor& f32) {
  if (src.dtype() != DType::kF32) device.ops().cast(src, f32);
}

// Rounds an f32 workspace result into `dst` (nothing when it is dst itself).
void store(DeviceContext& device, const Tensor& f32, const Tensor& dst) {
  if (dst.dtype() != DType::kF32) device.ops().cast(f32, dst);
}

}  // namespace

void attention_forward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                       const Tensor& qkv, std::int64_t n_head, const Tensor& att, const Tensor& y) {
  const Heads g = attention_heads_of(qkv, n_head);
  const std::int64_t t = g.seq_len, hs = g.head_size, c = g.channels, ld_qkv = 3 * c;
  const AttentionForwardWorkspace ws = attention_forward_workspace(device, qkv, att, y);
  load(device, qkv, ws.qkv32);
  const float* qkv_data = ws.qkv32.data_as<float>();
  float* att_data = ws.att32.data_as<float>();
  float* y_data = ws.y32.data_as<float>();
  cublas.with_stream(device, stream, [&](CublasHandle& handle) {
    for (std::int64_t b = 0; b < g.batch; ++b) {
      // S_h (T, T) = scale q_h (T, hs) · k_h^T (hs, T) for every head h of row b.
      const float* q = qkv_data + b * t * ld_qkv;
      gemm_strided_batched<float, float>(handle, false, true, t, t, hs, g.scale(), q, ld_qkv, hs,
                                         q + c, ld_qkv, hs, 0.0f, att_data + b * n_head * t * t, t,
                                         t * t, n_head);
    }
  });
  causal_softmax_forward<float>(att_data, g.batch * n_head * t, t, stream);
  cublas.with_stream(device, stream, [&](CublasHandle& handle) {
    for (std::int64_t b = 0; b < g.batch; ++b) {
      // y_h (T, hs) = P_h (T, T) · v_h (T, hs), into columns [h hs, (h+1) hs) of y.
      const float* v = qkv_data + b * t * ld_qkv + 2 * c;
      gemm_strided_batched<float, float>(handle, false, false, t, hs, t, 1.0f,
                                         att_data + b * n_head * t * t, t, t * t, v, ld_qkv, hs,
                                         0.0f, y_data + b * t * c, c, hs, n_head);
    }
  });
  store(device, ws.att32, att);
  store(device, ws.y32, y);
}

void attention_backward(DeviceContext& device, const SharedCublasHandle& cublas, void* stream,
                        const Tensor& qkv, const Tensor& att, const Tensor& dy, std::int64_t n_head,
                        const Tensor& dqkv) {
  const Heads g = attention_heads_of(qkv, n_head);
  const std::int64_t t = g.seq_len, hs = g.head_size, c = g.channels, ld_qkv = 3 * c;
  const AttentionBackwardWorkspace ws = attention_backward_workspace(device, qkv, att, dy, dqkv);
  load(device, qkv, ws.qkv32);
  load(device, att, ws.att32);
  load(device, dy, ws.dy32);
  load(device, dqkv, ws.dqkv32);  // dqkv is zero on entry
  const float* qkv_data = ws.qkv32.data_as<float>();
  const float* p_data = ws.att32.data_as<float>();
  const float* dy_data = ws.dy32.data_as<float>();
  float* dqkv_data = ws.dqkv32.data_as<float>();
  float* ds_data = ws.scratch.data_as<float>();
  cublas.with_stream(device, stream, [&](CublasHandle& handle) {
    for (std::int64_t b = 0; b < g.batch; ++b) {
      const float* v = qkv_data + b * t * ld_qkv + 2 * c;
      const float* dy_b = dy_data + b * t * c;
      const float* p_b = p_data + b * n_head * t * t;
      // dP_h (T, T) = dy_h (T, hs) · v_h^T (hs, T);  dv_h (T, hs) += P_h^T (T, T) · dy_h
      gemm_strided_batched<float, float>(handle, false, true, t, t, hs, 1.0f, dy_b, c, hs, v,
                                         ld_qkv, hs, 0.0f, ds_data + b * n_head * t * t, t, t * t,
                                         n_head);
      gemm_strided_batched<float, float>(handle, true, false, t, hs, t, 1.0f, p_b, t, t * t, dy_b,
                                         c, hs, 1.0f, dqkv_data + b * t * ld_qkv + 2 * c, ld_qkv,
                                         hs, n_head);
    }
  });
  causal_softmax_backward<float>(p_data, ds_data, g.batch * n_head * t, t, stream);
  cublas.with_stream(device, stream, [&](CublasHandle& handle) {
    for (std::int64_t b = 0; b < g.batch; ++b) {
      const float* q = qkv_data + b * t * ld_qkv;
      const float* ds_b = ds_data + b * n_head * t * t;
      float* dq = dqkv_data + b * t * ld_qkv;
      // dq_h (T, hs) += scale dS_h (T, T) · k_h (T, hs);  dk_h += scale dS_h^T · q_h
      gemm_strided_batched<float, float>(handle, false, false, t, hs, t, g.scale(), ds_b, t, t * t,
                                         q + c, ld_qkv, hs, 1.0f, dq, ld_qkv, hs, n_head);
      gemm_strided_batched<float, float>(handle, true, false, t, hs, t, g.scale(), ds_b, t, t * t,
                                         q, ld_qkv, hs, 1.0f, dq + c, ld_qkv, hs, n_head);
    }
  });
  store(device, ws.dqkv32, dqkv);
}

}  // namespace zt::nn::cuda::detail
