// GroupedQueryAttention forward/backward: the qkv projection, rotary embeddings on q and k in
// place in qkv, the attention core on the kernel backend (k and v with fewer heads than q),
// and the output projection.
//   forward:  qkv = x Wqkv^T                  (B, T, (nh + 2 nkv) hs)
//             q, k = rope(q, t), rope(k, t)   in place, at positions t = 0..T-1
//             y = attention(q, k, v)          query head h reads kv head h / (nh / nkv)
//                                             (P dropped in training with dropout)
//             out = y Wp^T                    (B, T, C)
//   backward: dy = dout Wp;  dq, dk, dv = attention_backward(...)  (into dqkv)
//             dq, dk = rope^T(dq), rope^T(dk)  in place;  dx = dqkv Wqkv
// Saved: x and y (by the two Linears, y also here), the rotated qkv (what attention's
// backward reads) and lse in f32. Decoding (ModuleContext::decode) rotates at the absolute
// positions the cache is at and caches the rotated k (Note [Decoding with a KV cache]).
#include "nn/layers/grouped_query_attention.h"

#include "core/error.h"
#include "nn/decode_state.h"
#include "nn/kernels/attention_heads.h"
#include "nn/layers/attention_core.h"

namespace zt::nn {

GroupedQueryAttention::GroupedQueryAttention(std::string name,
                                             const GroupedQueryAttentionShape& shape,
                                             float proj_init_std, AttentionDropout dropout)
    : name_(std::move(name)),
      channels_(shape.channels),
      n_head_(shape.n_head),
      n_kv_head_(shape.n_kv_head),
      head_dim_(shape.n_head > 0 ? shape.channels / shape.n_head : 0),
      proj_init_std_(proj_init_std),
      dropout_(dropout),
      rope_(shape.rope_theta),
      qkv_(name_ + ".qkv", channels_, qkv_width(), false),
      proj_(name_ + ".proj", channels_, channels_, false) {
  ZT_CHECK(n_head_ > 0 && n_kv_head_ > 0 && channels_ > 0 && channels_ % n_head_ == 0 &&
               n_head_ % n_kv_head_ == 0 && head_dim_ % 2 == 0,
           name_ +
               ": channels must be a positive multiple of n_head, n_kv_head must divide "
               "n_head and head_dim must be even");
}

std::vector<ParameterSpec> GroupedQueryAttention::parameter_specs() const {
  return {{name_ + ".qkv.weight", Shape{qkv_width(), channels_}, Init::normal(0.02f)},
          {name_ + ".proj.weight", Shape{channels_, channels_}, Init::normal(proj_init_std_)}};
}

Tensor GroupedQueryAttention::forward(ParameterViews params, const Tensor& input,
                                      ModuleContext& ctx) {
  ZT_CHECK(params.size() == 2, name_ + " given the wrong number of parameters");
  ZT_CHECK(input.rank() == 3 && input.dim(2) == channels_,
           name_ + ": input must be (B, T, C), got " + input.shape().to_string());
  if (ctx.decode != nullptr) return forward_with_cache(params, input, ctx);
  const Tensor qkv = qkv_.forward(params.subspan(0, 1), input, ctx);
  const QkvHeads heads = split_qkv(qkv, n_head_, n_kv_head_);
  rope_.forward(heads, 0, ctx);
  const AttentionOutput out = attend(heads, n_head_, input.dtype(), dropout_, ctx);
  ctx.saved.push(qkv);
  ctx.saved.push(out.y);  // the tensor proj_ saves too: no second copy
  ctx.saved.push(out.lse);
  return proj_.forward(params.subspan(1, 1), out.y, ctx);
}

// Note [Decoding with a KV cache]: this call's tokens sit at positions [position,
// position + T); their q and k are rotated there, so the cache holds rotated keys and a later
// query never turns an earlier key again.
Tensor GroupedQueryAttention::forward_with_cache(ParameterViews params, const Tensor& input,
                                                 ModuleContext& ctx) {
  const Tensor qkv = qkv_.forward(params.subspan(0, 1), input, ctx);
  const QkvHeads heads = split_qkv(qkv, n_head_, n_kv_head_);
  rope_.forward(heads, ctx.decode->position(), ctx);
  const AttentionOutput out = attend_through_cache(this, heads, n_head_, input.dtype(), ctx);
  return proj_.forward(params.subspan(1, 1), out.y, ctx);
}

Tensor GroupedQueryAttention::backward(ParameterViews params, ParameterViews grads,
                                       const Tensor& grad_output, ModuleContext& ctx) {
  const Tensor dy = proj_.backward(params.subspan(1, 1), grads.subspan(1, 1), grad_output, ctx);
  const Tensor lse = ctx.saved.pop();
  const Tensor y = ctx.saved.pop();
  const Tensor qkv = ctx.saved.pop();
  const Tensor dqkv =
      attention_backward_to_qkv(qkv, y, lse, dy, n_head_, n_kv_head_, dropout_, ctx);
  rope_.backward(split_qkv(dqkv, n_head_, n_kv_head_), 0, ctx);
  return qkv_.backward(params.subspan(0, 1), grads.subspan(0, 1), dqkv, ctx);
}

}  // namespace zt::nn
