// CPU attention core. qkv is laid out (B, T, 3C) with q, k, v side by side, so head h of
// batch row b is a strided (T, hs) sub-matrix (row stride 3C) that the GEMMs read in place.
//   forward:  S = q k^T / sqrt(hs);  P = causal_softmax(S)   (B, nh, T, T)
//             y = P v (heads side by side)                     (B, T, C)
//   backward: dP = dy v^T;  dv = P^T dy;  dS = P * (dP - rowsum(P * dP))
//             dq = dS k / sqrt(hs);  dk = dS^T q / sqrt(hs)
// The GEMMs and softmax rows run in f32: bf16/f16 qkv and dy are widened to f32 workspace,
// P one head at a time; y and P are rounded once. Forward's P v uses the unrounded f32 P.
#include "nn/kernels/cpu/attention_cpu.h"

#include <cmath>

#include "core/error.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/math/attention_math.h"

namespace zt::nn::cpu {
namespace {

using Heads = AttentionHeads;

// qkv (B, T, 3C) -> att (B, nh, T, T) probabilities (one row of `att` per head), y (B, T, C)
void forward_heads(const Heads& g, const float* qkv, const F32Rows& att, float* y) {
  const std::int64_t t_len = g.seq_len;
  const std::int64_t ld_qkv = 3 * g.channels;
  for (std::int64_t b = 0; b < g.batch; ++b) {
    for (std::int64_t h = 0; h < g.n_head; ++h) {
      const float* q = qkv + b * t_len * ld_qkv + h * g.head_size;
      const float* k = q + g.channels;
      const float* v = q + 2 * g.channels;
      const std::int64_t head = b * g.n_head + h;
      float* p = att.out(head);
      // S (T, T) = scale * q (T, hs) · k^T (hs, T); the masked upper triangle is computed
      // and then overwritten, which costs less than T small GEMMs.
      gemm_f32(false, true, t_len, t_len, g.head_size, g.scale(), q, ld_qkv, k, ld_qkv, 0.0f, p,
               t_len);
      for (std::int64_t t = 0; t < t_len; ++t) math::causal_softmax_row(p + t * t_len, t, t_len);
      // y_h (T, hs) = P (T, T) · v (T, hs), written into columns [h hs, (h+1) hs) of y.
      gemm_f32(false, false, t_len, g.head_size, t_len, 1.0f, p, t_len, v, ld_qkv, 0.0f,
               y + b * t_len * g.channels + h * g.head_size, g.channels);
      att.store(head);
    }
  }
}

// dy (B, T, C), qkv (B, T, 3C), att (B, nh, T, T) -> dqkv (B, T, 3C) accumulated.
// scratch (T, T) holds dP and then dS of one head.
void backward_heads(const Heads& g, const float* qkv, const F32Rows& att, const float* dy,
                    float* scratch, float* dqkv) {
  const std::int64_t t_len = g.seq_len;
  const std::int64_t ld_qkv = 3 * g.channels;
  for (std::int64_t b = 0; b < g.batch; ++b) {
    for (std::int64_t h = 0; h < g.n_head; ++h) {
      const std::int64_t head_offset = b * t_len * ld_qkv + h * g.head_size;
      const float* q = qkv + head_offset;
      const float* k = q + g.channels;
      const float* v = q + 2 * g.channels;
      float* dq = dqkv + head_offset;
      float* dk = dq + g.channels;
      float* dv = dq + 2 * g.channels;
      const float* p = att.load(b * g.n_head + h);
      const float* dy_h = dy + b * t_len * g.channels + h * g.head_size;
      // dP (T, T) = dy_h (T, hs) · v^T (hs, T);  dv (T, hs) += P^T (T, T) · dy_h (T, hs)
      gemm_f32(false, true, t_len, t_len, g.head_size, 1.0f, dy_h, g.channels, v, ld_qkv, 0.0f,
               scratch, t_len);
      gemm_f32(true, false, t_len, g.head_size, t_len, 1.0f, p, t_len, dy_h, g.channels, 1.0f, dv,
               ld_qkv);
      for (std::int64_t t = 0; t < t_len; ++t) {
        math::causal_softmax_backward_row(p + t * t_len, scratch + t * t_len, t, t_len);
      }
      // dq (T, hs) += scale * dS (T, T) · k (T, hs);  dk (T, hs) += scale * dS^T · q
      gemm_f32(false, false, t_len, g.head_size, t_len, g.scale(), scratch, t_len, k, ld_qkv, 1.0f,
               dq, ld_qkv);
      gemm_f32(true, false, t_len, g.head_size, t_len, g.scale(), scratch, t_len, q, ld_qkv, 1.0f,
               dk, ld_qkv);
    }
  }
}

}  // namespace

void attention_forward(const Tensor& qkv, std::int64_t n_head, const Tensor& att, const Tensor& y,
                       MemoryTracker& tracker) {
  const Heads g = attention_heads_of(qkv, n_head);
  // the f32 scratch lives only while the heads are computed
  const Tensor qkv_f32 = to_f32_scratch(qkv, tracker);
  const F32Rows att_heads(att, g.seq_len * g.seq_len, tracker);
  const F32Output y_f32(y, tracker);
  if (qkv.device().meta) return;  // Note [Dry kernels] in cpu_kernel_backend.cpp
  forward_heads(g, qkv_f32.data_as<float>(), att_heads, y_f32.data());
  y_f32.store();
}

void attention_backward(const Tensor& qkv, const Tensor& att, const Tensor& dy, std::int64_t n_head,
                        const Tensor& dqkv, MemoryTracker& tracker) {
  const Heads g = attention_heads_of(qkv, n_head);
  Tensor scratch =
      Tensor::zeros(Shape{g.seq_len, g.seq_len}, DType::kF32, tracker, MemoryCategory::kWorkspace);
  const Tensor qkv_f32 = to_f32_scratch(qkv, tracker);
  const Tensor dy_f32 = to_f32_scratch(dy, tracker);
  const F32Rows att_heads(att, g.seq_len * g.seq_len, tracker);
  const F32Output dqkv_f32(dqkv, tracker);
  if (qkv.device().meta) return;
  backward_heads(g, qkv_f32.data_as<float>(), att_heads, dy_f32.data_as<float>(),
                 scratch.data_as<float>(), dqkv_f32.data());
  dqkv_f32.store();
}

}  // namespace zt::nn::cpu
