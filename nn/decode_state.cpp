// The KV cache of decoding: allocation per layer at its first call, and the copies of each
// call's k and v into it.
#include "nn/decode_state.h"

#include <string>

#include "core/error.h"

namespace zt::nn {
namespace {

Tensor cache_tensor(std::int64_t batch, std::int64_t max_len, std::int64_t width, DType dtype,
                    MemoryTracker& tracker) {
  return Tensor::zeros(Shape{batch, max_len, width}, dtype, tracker, MemoryCategory::kActivations);
}

}  // namespace

LayerKvCache::LayerKvCache(std::int64_t batch, std::int64_t max_len, std::int64_t n_kv_head,
                           std::int64_t head_dim, DType dtype, MemoryTracker& tracker)
    : k_(AttentionHeads::packed(cache_tensor(batch, max_len, n_kv_head * head_dim, dtype, tracker),
                                n_kv_head)),
      v_(AttentionHeads::packed(cache_tensor(batch, max_len, n_kv_head * head_dim, dtype, tracker),
                                n_kv_head)) {}

void LayerKvCache::write(DeviceContext& device, const AttentionHeads& k, const AttentionHeads& v,
                         std::int64_t position) const {
  for (const auto& [from, to] : {std::pair{&k, &k_}, std::pair{&v, &v_}}) {
    ZT_CHECK(from->batch == to->batch && from->n_heads == to->n_heads &&
                 from->head_dim == to->head_dim && from->base.dtype() == to->base.dtype(),
             "KV cache: k or v of another layout than the cache's");
    ZT_CHECK(from->strides.head == from->head_dim,
             "KV cache: a position's heads must sit side by side");
    ZT_CHECK(position >= 0 && position + from->seq_len <= to->seq_len,
             "KV cache: positions [" + std::to_string(position) + ", " +
                 std::to_string(position + from->seq_len) + ") past its " +
                 std::to_string(to->seq_len));
    // One copy per (batch row, position): a position's heads are contiguous on both sides.
    const Shape row{from->n_heads * from->head_dim};
    for (std::int64_t b = 0; b < from->batch; ++b) {
      for (std::int64_t t = 0; t < from->seq_len; ++t) {
        device.ops().copy(from->base.view(from->row_start(b, t, 0), row),
                          to->base.view(to->row_start(b, position + t, 0), row));
      }
    }
  }
}

DecodeState::DecodeState(std::int64_t batch, std::int64_t max_len)
    : batch_(batch), max_len_(max_len) {
  ZT_CHECK(batch > 0 && max_len > 0, "DecodeState needs a positive batch and max_len");
}

void DecodeState::advance(std::int64_t tokens) {
  if (tokens < 0 || position_ + tokens > max_len_) {
    throw Error("decoding past the model's " + std::to_string(max_len_) +
                " positions (model.seq_len): at position " + std::to_string(position_) + ", " +
                std::to_string(tokens) + " more");
  }
  position_ += tokens;
}

LayerKvCache& DecodeState::layer_cache(const void* layer, std::int64_t n_kv_head,
                                       std::int64_t head_dim, DType dtype, MemoryTracker& tracker) {
  for (auto& [owner, cache] : layers_) {
    if (owner != layer) continue;
    ZT_CHECK(
        cache.n_kv_head() == n_kv_head && cache.head_dim() == head_dim && cache.dtype() == dtype,
        "KV cache: a layer asked for other heads than at its first call");
    return cache;
  }
  const ScopedAllocationName name("KV cache");
  layers_.emplace_back(layer, LayerKvCache(batch_, max_len_, n_kv_head, head_dim, dtype, tracker));
  return layers_.back().second;
}

}  // namespace zt::nn
