// ShardedDecoder: autoregressive decoding with the training model as it lives under its ZeRO
// strategy (stage 3: one block gathered at a time), on the rank's own device and tracker,
// for a batch of prompts of any lengths (Note [Decoding the sharded model]).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "core/device/device_context.h"
#include "nn/decode_state.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/model.h"
#include "runtime/generate/token_sampler.h"
#include "sharding/zero_strategy.h"

namespace zt::engine {

// The training model as a rank holds it, and the lane that carries rank 0's tokens.
struct ShardedModel {
  const nn::Model& model;  // its modules run forward; the parameters are the strategy's
  zero::ZeroStrategy& strategy;
  DeviceContext& device;     // the rank's training device; its tracker counts the cache
  comm::Communicator& comm;  // broadcasts rank 0's tokens (the trainer's control lane)
};

class ShardedDecoder {
 public:
  // `max_len`: the longest sequence (model.seq_len). Everything in `model` outlives this.
  ShardedDecoder(const ShardedModel& model, std::int64_t max_len);

  // Continues every prompt by `new_tokens` tokens and returns them, one row per prompt, the
  // same on every rank. Collective: every rank calls it with the same prompts (each at least
  // one token; Error when one and its new tokens do not fit in max_len). Rank 0 selects the
  // tokens with `sampler` (read there only: other ranks may pass any). At temperature 0 a
  // row's tokens are those of decoding its prompt alone.
  std::vector<std::vector<std::int32_t>> generate(
      const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
      generate::TokenSampler& sampler);
  // As above, row b's tokens selected by `row_samplers[b]` (one per prompt; read on rank 0
  // only, where it must hold one per prompt): a row's draws then depend on its own prompt
  // and sampler alone, not on the other rows (Note [A stream per row]).
  std::vector<std::vector<std::int32_t>> generate(
      const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
      std::span<generate::TokenSampler> row_samplers);

 private:
  // Row `row`'s next token from its logits (rank 0).
  using SelectToken = std::function<std::int32_t(std::size_t row, std::span<const float> logits)>;
  std::vector<std::vector<std::int32_t>> decode(
      const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
      const SelectToken& select);
  // The model over `ids` (B, T) i32 on the device at the state's next positions, block by
  // block through the strategy's hooks; the logits (B, T, V) in the compute dtype.
  Tensor forward(const Tensor& ids, nn::DecodeState& state);
  // The logits after each row's last position (B x V, f32, host).
  std::vector<float> last_logits(const Tensor& logits);
  // Rank 0's `ids` (B) in every rank's `ids`, through `buffer` (B, 1) on the device, which
  // then holds them as the next forward's input.
  void broadcast_ids(std::vector<std::int32_t>& ids, const Tensor& buffer);

  ShardedModel sharded_;
  const nn::KernelBackend& kernels_;
  std::int64_t max_len_;
};

}  // namespace zt::engine
