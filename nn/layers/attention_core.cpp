// The self-attention layers' shared core: see attention_core.h.
#include "nn/layers/attention_core.h"

#include <optional>

#include "nn/decode_state.h"
#include "nn/layers/dropout.h"

namespace zt::nn {
namespace {

// lse first, then y: the order the layers allocated them in before they shared this, which
// the memory profile's event order (and a GPU allocator's layout) follows.
AttentionOutput empty_output(const AttentionHeads& q, DType dtype, ModuleContext& ctx) {
  AttentionOutput out;
  out.lse = Tensor::empty(Shape{q.batch, q.n_heads, q.seq_len}, DType::kF32, ctx.tracker(),
                          MemoryCategory::kActivations);
  out.y = Tensor::empty(Shape{q.batch, q.seq_len, q.n_heads * q.head_dim}, dtype, ctx.tracker(),
                        MemoryCategory::kActivations);
  return out;
}

// The probabilities' mask of this micro-batch: none outside training or with p = 0.
std::optional<math::DropoutMask> probs_mask(const AttentionDropout& dropout,
                                            const ModuleContext& ctx) {
  if (ctx.dropout == nullptr || dropout.p <= 0.0f) return std::nullopt;
  return dropout_mask(*ctx.dropout, dropout.p, dropout.layer, math::DropoutSite::kAttentionProbs);
}

}  // namespace

AttentionOutput attend(const QkvHeads& heads, std::int64_t n_head, DType dtype,
                       const AttentionDropout& dropout, ModuleContext& ctx) {
  AttentionOutput out = empty_output(heads.q, dtype, ctx);
  const std::optional<math::DropoutMask> mask = probs_mask(dropout, ctx);
  ctx.kernels.attention_forward(ctx.device, heads.q, heads.k, heads.v,
                                AttentionHeads::packed(out.y, n_head), out.lse,
                                mask ? &*mask : nullptr);
  return out;
}

AttentionOutput attend_through_cache(const void* layer, const QkvHeads& heads, std::int64_t n_head,
                                     DType dtype, ModuleContext& ctx) {
  const std::int64_t position = ctx.decode->position();
  const std::int64_t seen = position + heads.q.seq_len;
  const LayerKvCache& cache =
      ctx.decode->layer_cache(layer, heads.k.n_heads, heads.k.head_dim, dtype, ctx.tracker());
  cache.write(ctx.device, heads.k, heads.v, position);
  AttentionOutput out = empty_output(heads.q, dtype, ctx);
  ctx.kernels.attention_forward(ctx.device, heads.q, cache.keys(seen), cache.values(seen),
                                AttentionHeads::packed(out.y, n_head), out.lse);
  return out;
}

Tensor attention_backward_to_qkv(const Tensor& qkv, const Tensor& y, const Tensor& lse,
                                 const Tensor& dy, std::int64_t n_head, std::int64_t n_kv_head,
                                 const AttentionDropout& dropout, ModuleContext& ctx) {
  // dq, dk and dv are written side by side into dqkv, as q, k and v sit in qkv.
  Tensor dqkv =
      Tensor::empty(qkv.shape(), qkv.dtype(), ctx.tracker(), MemoryCategory::kActivations);
  const QkvHeads heads = split_qkv(qkv, n_head, n_kv_head);
  const QkvHeads grads = split_qkv(dqkv, n_head, n_kv_head);
  const std::optional<math::DropoutMask> mask = probs_mask(dropout, ctx);
  ctx.kernels.attention_backward(
      ctx.device, heads.q, heads.k, heads.v, AttentionHeads::packed(y, n_head), lse,
      AttentionHeads::packed(dy, n_head), grads.q, grads.k, grads.v, mask ? &*mask : nullptr);
  return dqkv;
}

}  // namespace zt::nn
