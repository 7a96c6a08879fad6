// The attention core the self-attention layers share between their projections: causal
// attention over q, k and v heads read in place from a fused qkv tensor, in training (o and
// lse kept for backward) or when decoding through a KV cache (Note [Decoding with a KV cache]).
// What differs between the layers (biases, rotary embeddings, grouped kv heads) stays in them.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"
#include "nn/module.h"

namespace zt::nn {

// y (B, T, n_head head_dim) in the activations' dtype and lse (B, n_head, T) f32, both
// tracked as activations.
struct AttentionOutput {
  Tensor y;
  Tensor lse;
};

// Dropout on the attention probabilities (nanoGPT's attn_dropout; Note [Attention dropout] in
// nn/kernels/math/attention_dropout_math.h) of the block `layer`, in a training step only (a
// ModuleContext with a DropoutDraw). p = 0: none.
struct AttentionDropout {
  float p = 0.0f;
  std::int64_t layer = 0;
};

// Training's forward: attention of q over k and v (equal lengths, causal), its probabilities
// dropped as `dropout` says.
AttentionOutput attend(const QkvHeads& heads, std::int64_t n_head, DType dtype,
                       const AttentionDropout& dropout, ModuleContext& ctx);

// Decoding: writes this call's k and v into `layer`'s cache at the decode position, then
// attends from this call's queries over every cached key up to their own.
AttentionOutput attend_through_cache(const void* layer, const QkvHeads& heads, std::int64_t n_head,
                                     DType dtype, ModuleContext& ctx);

// The gradient at qkv (its shape and dtype, q's, k's and v's columns side by side as in qkv)
// of the attention that gave y and lse with `dropout`, given dy = dL/dy.
Tensor attention_backward_to_qkv(const Tensor& qkv, const Tensor& y, const Tensor& lse,
                                 const Tensor& dy, std::int64_t n_head, std::int64_t n_kv_head,
                                 const AttentionDropout& dropout, ModuleContext& ctx);

}  // namespace zt::nn
