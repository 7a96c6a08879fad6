// CausalSelfAttention forward/backward. qkv is laid out (B, T, 3C) with q, k, v side by side,
// so head h of batch row b is a strided (T, hs) sub-matrix (row stride 3C) that the GEMMs
// read in place. The softmax rows call the math shared with the CUDA kernels.
//   forward:  qkv = x Wqkv^T + bqkv                          (B, T, 3C)
//             S = q k^T / sqrt(hs);  P = causal_softmax(S)   (B, nh, T, T)
//             y = P v (heads side by side);  out = y Wp^T + bp (B, T, C)
//   backward: dP = dy v^T;  dv = P^T dy;  dS = P * (dP - rowsum(P * dP))
//             dq = dS k / sqrt(hs);  dk = dS^T q / sqrt(hs)
// Saved: x and y (by the two Linears), qkv and P, all in the activations' dtype. The GEMMs
// and softmax rows run in f32: bf16/f16 qkv and dy are widened to f32 workspace, P one head
// at a time; y and P are rounded once. Forward's P v uses the unrounded f32 P.
#include "nn/layers/causal_self_attention.h"

#include <cmath>

#include "core/error.h"
#include "nn/kernels/cpu/dtype_io.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/kernels/math/attention_math.h"

namespace zt::nn {
namespace {

struct Heads {
  std::int64_t batch;
  std::int64_t seq_len;
  std::int64_t channels;
  std::int64_t n_head;
  std::int64_t head_size;
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_size)); }
};

// qkv (B, T, 3C) -> att (B, nh, T, T) probabilities (one row of `att` per head), y (B, T, C)
void attention_forward(const Heads& g, const float* qkv, const cpu::F32Rows& att, float* y) {
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
      cpu::gemm_f32(false, true, t_len, t_len, g.head_size, g.scale(), q, ld_qkv, k, ld_qkv, 0.0f,
                    p, t_len);
      for (std::int64_t t = 0; t < t_len; ++t) math::causal_softmax_row(p + t * t_len, t, t_len);
      // y_h (T, hs) = P (T, T) · v (T, hs), written into columns [h hs, (h+1) hs) of y.
      cpu::gemm_f32(false, false, t_len, g.head_size, t_len, 1.0f, p, t_len, v, ld_qkv, 0.0f,
                    y + b * t_len * g.channels + h * g.head_size, g.channels);
      att.store(head);
    }
  }
}

// dy (B, T, C), qkv (B, T, 3C), att (B, nh, T, T) -> dqkv (B, T, 3C) accumulated.
// scratch (T, T) holds dP and then dS of one head.
void attention_backward(const Heads& g, const float* qkv, const cpu::F32Rows& att, const float* dy,
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
      cpu::gemm_f32(false, true, t_len, t_len, g.head_size, 1.0f, dy_h, g.channels, v, ld_qkv, 0.0f,
                    scratch, t_len);
      cpu::gemm_f32(true, false, t_len, g.head_size, t_len, 1.0f, p, t_len, dy_h, g.channels, 1.0f,
                    dv, ld_qkv);
      for (std::int64_t t = 0; t < t_len; ++t) {
        math::causal_softmax_backward_row(p + t * t_len, scratch + t * t_len, t, t_len);
      }
      // dq (T, hs) += scale * dS (T, T) · k (T, hs);  dk (T, hs) += scale * dS^T · q
      cpu::gemm_f32(false, false, t_len, g.head_size, t_len, g.scale(), scratch, t_len, k, ld_qkv,
                    1.0f, dq, ld_qkv);
      cpu::gemm_f32(true, false, t_len, g.head_size, t_len, g.scale(), scratch, t_len, q, ld_qkv,
                    1.0f, dk, ld_qkv);
    }
  }
}

}  // namespace

CausalSelfAttention::CausalSelfAttention(std::string name, std::int64_t channels,
                                         std::int64_t n_head, float proj_init_std)
    : name_(std::move(name)),
      channels_(channels),
      n_head_(n_head),
      proj_init_std_(proj_init_std),
      qkv_(name_ + ".qkv", channels, 3 * channels, true),
      proj_(name_ + ".proj", channels, channels, true) {
  ZT_CHECK(n_head_ > 0 && channels_ > 0 && channels_ % n_head_ == 0,
           name_ + ": channels must be a positive multiple of n_head");
}

std::vector<ParameterSpec> CausalSelfAttention::parameter_specs() const {
  return {{name_ + ".qkv.weight", Shape{3 * channels_, channels_}, Init::normal(0.02f)},
          {name_ + ".qkv.bias", Shape{3 * channels_}, Init::zeros()},
          {name_ + ".proj.weight", Shape{channels_, channels_}, Init::normal(proj_init_std_)},
          {name_ + ".proj.bias", Shape{channels_}, Init::zeros()}};
}

Tensor CausalSelfAttention::forward(ParameterViews params, const Tensor& input,
                                    ModuleContext& ctx) {
  ZT_CHECK(params.size() == 4, name_ + " given the wrong number of parameters");
  ZT_CHECK(input.rank() == 3 && input.dim(2) == channels_,
           name_ + ": input must be (B, T, C), got " + input.shape().to_string());
  const Heads g{input.dim(0), input.dim(1), channels_, n_head_, channels_ / n_head_};
  const Tensor qkv = qkv_.forward(params.subspan(0, 2), input, ctx);  // (B, T, 3C)
  Tensor att = Tensor::zeros(Shape{g.batch, n_head_, g.seq_len, g.seq_len}, input.dtype(),
                             ctx.tracker, MemoryCategory::kActivations);
  Tensor y = Tensor::zeros(input.shape(), input.dtype(), ctx.tracker, MemoryCategory::kActivations);
  {  // the f32 scratch lives only while the heads are computed
    const Tensor qkv_f32 = cpu::to_f32_scratch(qkv, ctx.tracker);
    const cpu::F32Rows att_heads(att, g.seq_len * g.seq_len, ctx.tracker);
    const cpu::F32Output y_f32(y, ctx.tracker);
    attention_forward(g, qkv_f32.data_as<float>(), att_heads, y_f32.data());
    y_f32.store();
  }
  ctx.saved.push(qkv);
  ctx.saved.push(att);
  return proj_.forward(params.subspan(2, 2), y, ctx);
}

Tensor CausalSelfAttention::backward(ParameterViews params, ParameterViews grads,
                                     const Tensor& grad_output, ModuleContext& ctx) {
  const Tensor dy = proj_.backward(params.subspan(2, 2), grads.subspan(2, 2), grad_output, ctx);
  const Tensor att = ctx.saved.pop();
  const Tensor qkv = ctx.saved.pop();
  const Heads g{qkv.dim(0), qkv.dim(1), channels_, n_head_, channels_ / n_head_};
  Tensor dqkv = Tensor::zeros(qkv.shape(), qkv.dtype(), ctx.tracker, MemoryCategory::kActivations);
  {  // the f32 scratch lives only while the heads are computed
    Tensor scratch = Tensor::zeros(Shape{g.seq_len, g.seq_len}, DType::kF32, ctx.tracker,
                                   MemoryCategory::kWorkspace);
    const Tensor qkv_f32 = cpu::to_f32_scratch(qkv, ctx.tracker);
    const Tensor dy_f32 = cpu::to_f32_scratch(dy, ctx.tracker);
    const cpu::F32Rows att_heads(att, g.seq_len * g.seq_len, ctx.tracker);
    const cpu::F32Output dqkv_f32(dqkv, ctx.tracker);
    attention_backward(g, qkv_f32.data_as<float>(), att_heads, dy_f32.data_as<float>(),
                       scratch.data_as<float>(), dqkv_f32.data());
    dqkv_f32.store();
  }
  return qkv_.backward(params.subspan(0, 2), grads.subspan(0, 2), dqkv, ctx);
}

}  // namespace zt::nn
