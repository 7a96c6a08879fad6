// Decoder: a model's forward for generation, one sequence at a time: the logits of the next
// token after some tokens, through a KV cache (nn::DecodeState) or, for comparison, by a full
// forward over the whole sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/device/device_context.h"
#include "nn/decode_state.h"
#include "nn/model.h"
#include "runtime/generate/model_weights.h"

namespace zt::generate {

class Decoder {
 public:
  // `max_len`: the longest sequence (model.seq_len); all three outlive the decoder.
  Decoder(nn::Model& model, const ModelWeights& weights, DeviceContext& device,
          std::int64_t max_len);

  std::int64_t max_len() const { return max_len_; }
  // Positions in the KV cache (tokens fed since the last reset).
  std::int64_t position() const { return state_.position(); }
  // Empties the cache: the next tokens start at position 0.
  void reset();

  // Feeds `tokens` at the next positions through the KV cache (Note [Decoding with a KV
  // cache]) and returns the logits (vocab, f32) after the last of them.
  std::vector<float> feed(std::span<const std::int32_t> tokens);
  // The logits after the last of `tokens` by a forward over all of them from position 0,
  // with no cache (what feed must equal).
  std::vector<float> full_forward(std::span<const std::int32_t> tokens);

 private:
  std::vector<float> forward(std::span<const std::int32_t> tokens, nn::DecodeState* state);

  nn::Model& model_;
  const ModelWeights& weights_;
  DeviceContext& device_;
  std::int64_t max_len_;
  nn::DecodeState state_;
};

}  // namespace zt::generate
