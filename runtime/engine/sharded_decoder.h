// ShardedDecoder: autoregressive decoding with the training model as it lives under its ZeRO
// strategy (stage 3: one block gathered at a time), on the rank's own device and tracker,
// for a batch of prompts of any lengths (Note [Decoding the sharded model]).
#pragma once

#include <cstdint>
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
  DeviceContext& device;  // the rank's training device; its tracker counts the cache
  // The run's kernels (runtime.attention's choice): the prompt's prefill runs on cuDNN's fused
  // attention where training's does (Note [Decoding the sharded model]).
  const nn::KernelBackend& kernels;
  comm::Communicator& comm;  // broadcasts rank 0's token ids (the trainer's control lane)
};

class ShardedDecoder {
 public:
  // `max_len`: the longest sequence (model.seq_len). Everything in `model` outlives this.
  ShardedDecoder(const ShardedModel& model, std::int64_t max_len);

  // Continues every prompt by `new_tokens` tokens and returns them, one row per prompt, the
  // same on every rank. Collective: every rank calls it with the same prompts (each at least
  // one token; Error when one and its new tokens do not fit in max_len) and sampling. Tokens
  // are selected on the device among the ids below `vocab_limit` (the data's vocabulary: Note
  // [Padded vocabulary]); row b's token at position p is draw p of stream b of sampling.seed
  // (Note [A stream per row]). At temperature 0 a row's tokens are those of decoding its
  // prompt alone.
  std::vector<std::vector<std::int32_t>> generate(
      const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
      const generate::SamplingOptions& sampling, std::int64_t vocab_limit);

 private:
  // The model over `ids` (B, T) i32 on the device at the state's next positions, block by
  // block through the strategy's hooks; the logits (B, T, V) in the compute dtype.
  Tensor forward(const Tensor& ids, nn::DecodeState& state);
  // Every row's token at `position` into `ids` (B, 1) on the device: selected from `logits`
  // (B, T, V) after its last position among the first `classes` ids, or, for a row still
  // inside its prompt, left as the prompt's token already there; then rank 0's ids broadcast to
  // every rank. `selected` (B, 1) is scratch for the rows inside their prompt.
  void select(const Tensor& logits, std::int64_t classes, const nn::math::TokenSampling& sampling,
              std::int64_t position, const std::vector<std::vector<std::int32_t>>& prompts,
              const Tensor& selected, const Tensor& ids);

  ShardedModel sharded_;
  std::int64_t max_len_;
};

}  // namespace zt::engine
