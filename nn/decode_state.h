// DecodeState: what a model keeps between the calls of autoregressive decoding: per
// attention layer a KV cache of the keys and values of every position seen so far, and the
// position of the next token. A forward given one (ModuleContext::decode) runs on this
// call's new tokens only: position-dependent layers use absolute positions and attention
// reads the cache (Note [Decoding with a KV cache]).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/device/device_context.h"
#include "core/tensor.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn {

// Note [Decoding with a KV cache]
// Generation feeds the prompt once (prefill), then one sampled token per call. Each call's
// tokens sit at absolute positions [position, position + T): the Embedding adds wpe at those
// rows, and an attention layer writes this call's k and v into its cache at those positions,
// then attends from its T queries over cached keys [0, position + T) (attention with a longer
// key sequence, Note [Longer key sequence]). Nothing is kept for a backward: the caller
// drops what other layers save after each block. After the whole model has run, the caller
// advances the position by T. A layer's cache is keyed by the layer object and allocated at
// its first call with its own kv heads and head_dim, so a grouped-query layer (fewer kv
// heads) or one that rotates k by position before caching it uses the same state.
// Without a DecodeState every layer computes as in training, bit for bit.

// One attention layer's cache: k and v (B, max_len, n_kv_head head_dim) in the activations'
// dtype, tracked as activations.
class LayerKvCache {
 public:
  LayerKvCache(std::int64_t batch, std::int64_t max_len, std::int64_t n_kv_head,
               std::int64_t head_dim, DType dtype, MemoryTracker& tracker);

  // Copies k and v (B, T, n_kv_head, head_dim; each position's heads side by side, as in a
  // fused qkv) into positions [position, position + T).
  void write(DeviceContext& device, const AttentionHeads& k, const AttentionHeads& v,
             std::int64_t position) const;
  // The cached keys and values of positions [0, positions).
  AttentionHeads keys(std::int64_t positions) const { return k_.positions(0, positions); }
  AttentionHeads values(std::int64_t positions) const { return v_.positions(0, positions); }
  std::int64_t n_kv_head() const { return k_.n_heads; }
  std::int64_t head_dim() const { return k_.head_dim; }
  DType dtype() const { return k_.base.dtype(); }

 private:
  AttentionHeads k_, v_;  // over (B, max_len, n_kv_head head_dim) tensors of their own
};

class DecodeState {
 public:
  // Sequences of `batch` rows and at most `max_len` positions (the model's seq_len).
  DecodeState(std::int64_t batch, std::int64_t max_len);

  std::int64_t batch() const { return batch_; }
  std::int64_t max_len() const { return max_len_; }
  // Positions already cached: the absolute position of the next call's first token.
  std::int64_t position() const { return position_; }
  // After the model has run over `tokens` new positions. Throws Error past max_len.
  void advance(std::int64_t tokens);

  // The cache of the attention layer `layer`, allocated at its first call with these heads
  // (later calls must ask for the same).
  LayerKvCache& layer_cache(const void* layer, std::int64_t n_kv_head, std::int64_t head_dim,
                            DType dtype, MemoryTracker& tracker);

 private:
  std::int64_t batch_;
  std::int64_t max_len_;
  std::int64_t position_ = 0;
  std::vector<std::pair<const void*, LayerKvCache>> layers_;  // in first-call order
};

}  // namespace zt::nn
