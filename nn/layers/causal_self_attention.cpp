// CausalSelfAttention forward/backward: the qkv projection, the attention core on the
// kernel backend (its q, k and v heads read in place from qkv (B, T, 3C)), and the output
// projection.
//   forward:  qkv = x Wqkv^T + bqkv                                   (B, T, 3C)
//             S = q k^T / sqrt(hs);  lse = logsumexp_causal(S)        (B, nh, T)
//             y = exp(S - lse) v (heads side by side);  out = y Wp^T + bp  (B, T, C)
//   backward: P = exp(S - lse), recomputed by the kernel;  dv = P^T dy;  dP = dy v^T
//             dS = P * (dP - rowsum(dy * y));  dq = dS k / sqrt(hs);  dk = dS^T q / sqrt(hs)
// With dropout in training, P is dropped after the softmax and the backward draws the same
// mask again (Note [Attention dropout] in nn/kernels/math/attention_dropout_math.h).
// Saved: x and y (by the two Linears, y also here), qkv in the activations' dtype and lse in
// f32; nothing of size T x T. Decoding (ModuleContext::decode) reads and extends a KV cache
// instead and saves nothing of its own.
#include "nn/layers/causal_self_attention.h"

#include "core/error.h"
#include "nn/kernels/attention_heads.h"
#include "nn/layers/attention_core.h"

namespace zt::nn {

CausalSelfAttention::CausalSelfAttention(std::string name, std::int64_t channels,
                                         std::int64_t n_head, float proj_init_std,
                                         AttentionDropout dropout)
    : name_(std::move(name)),
      channels_(channels),
      n_head_(n_head),
      proj_init_std_(proj_init_std),
      dropout_(dropout),
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
  if (ctx.decode != nullptr) return forward_with_cache(params, input, ctx);
  const Tensor qkv = qkv_.forward(params.subspan(0, 2), input, ctx);  // (B, T, 3C)
  const AttentionOutput out =
      attend(split_qkv(qkv, n_head_, n_head_), n_head_, input.dtype(), dropout_, ctx);
  ctx.saved.push(qkv);
  ctx.saved.push(out.y);  // the tensor proj_ saves too: no second copy
  ctx.saved.push(out.lse);
  return proj_.forward(params.subspan(2, 2), out.y, ctx);
}

// Note [Decoding with a KV cache]: this call's k and v join the cache at positions
// [position, position + T), and its T queries attend over every cached key up to their own.
Tensor CausalSelfAttention::forward_with_cache(ParameterViews params, const Tensor& input,
                                               ModuleContext& ctx) {
  const Tensor qkv = qkv_.forward(params.subspan(0, 2), input, ctx);  // (B, T, 3C)
  const AttentionOutput out =
      attend_through_cache(this, split_qkv(qkv, n_head_, n_head_), n_head_, input.dtype(), ctx);
  return proj_.forward(params.subspan(2, 2), out.y, ctx);
}

Tensor CausalSelfAttention::backward(ParameterViews params, ParameterViews grads,
                                     const Tensor& grad_output, ModuleContext& ctx) {
  const Tensor dy = proj_.backward(params.subspan(2, 2), grads.subspan(2, 2), grad_output, ctx);
  const Tensor lse = ctx.saved.pop();
  const Tensor y = ctx.saved.pop();
  const Tensor qkv = ctx.saved.pop();
  const Tensor dqkv = attention_backward_to_qkv(qkv, y, lse, dy, n_head_, n_head_, dropout_, ctx);
  return qkv_.backward(params.subspan(0, 2), grads.subspan(0, 2), dqkv, ctx);
}

}  // namespace zt::nn
