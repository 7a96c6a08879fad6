// Decoding through the ZeRO strategy's hooks: a prefill of the prompts' common length, then
// one position per call with teacher forcing, the tokens selected on the device and rank 0's
// broadcast to every rank.
#include "runtime/engine/sharded_decoder.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/error.h"

namespace zt::engine {

// Note [Decoding the sharded model]
// Sampling during training decodes with the weights training holds, as they are held: each
// call runs the blocks as evaluation does (BlockPass::forward_only): before_forward(b),
// the block's forward with an nn::DecodeState in its ModuleContext (Note [Decoding with a KV
// cache]), its saved tensors dropped, after_forward(b), and end_forward_only() after the
// last block. Stage 3 so gathers one block at a time (with its prefetch) and no rank ever
// holds a full copy of the weights; stages 0-2 read their full compute-dtype parameters in
// place. Everything is allocated on the rank's training device and counted by its tracker;
// the KV cache is in the activations' (compute) dtype.
//
// Prompts of different lengths share one batch without padding or a mask: every row
// advances from position 0 together. The common shortest length is fed in one call
// (prefill); after it, one position per call, where a row still inside its prompt is fed its
// own next prompt token (teacher forcing) instead of the one selected from its logits. So
// each row's keys, values and logits are computed from exactly its own tokens at their own
// positions, and its result is that of decoding it alone (at temperature 0 the same tokens;
// the prefill's rows are split differently, so logits can differ in the last bits). A row
// that has all its tokens keeps being fed its last one until the longest row is done; what
// it computes then is not read.
//
// Decoding is collective: at stage 3 every forward gathers, so every rank runs every call.
// Tokens are selected on the device (KernelBackend::select_tokens: argmax, or a draw from a
// counter-based stream in integer arithmetic, Note [Selecting a token in integers]), into a
// device buffer of every position's ids whose slot for a position is the next call's input,
// so no token crosses to the host until the end and selecting adds no host wait per token
// (what a forward's gathers wait for is theirs): the host reads the ids once, after the last
// call (Note [Ids stay on the device]).
//
// Attention runs on the run's kernels (runtime.attention's choice, ShardedModel::kernels).
// The prefill's queries attend over as many keys, from position 0, so where training runs
// cuDNN's fused attention the prompt does too (its graph built at the first call, or refused
// and run on the rows kernels with one warning: Note [cuDNN attention never ends a run]); a
// decode step's single query attends over a longer key sequence, which the backend runs on
// rows (AttentionPath). generate::Decoder, the single-device path, keeps the default kernels.

// Note [Ids stay on the device]
// Each rank computes the same logits from the same parameters, and select_tokens gives the
// same ids for the same logits on every backend; but nothing promises the logits' bits agree
// across ranks (a GEMM's algorithm choice, a kernel's reduction order, ranks on different
// hardware), and ranks that chose different tokens would go on to decode different sequences
// and return different results, with nothing to tell. So rank 0 alone selects and its B int32
// ids are broadcast on the control lane into every rank's slot, as a device tensor: on NCCL
// the broadcast is ordered on the streams and the host does not wait for it (Gloo stages it
// through the host, a wait per position); with one rank there is nothing to broadcast. The
// cost is one broadcast of B x 4 bytes per position, against the certainty that every rank
// feeds the same tokens. A row still inside its prompt keeps its prompt's token, which the
// buffer holds from the start (one copy of the prompts' tails before the first call); only
// the rows past their prompt take the selected id, through a device copy each while some row
// is still in its prompt, directly otherwise.

ShardedDecoder::ShardedDecoder(const ShardedModel& model, std::int64_t max_len)
    : sharded_(model), max_len_(max_len) {}

Tensor ShardedDecoder::forward(const Tensor& ids, nn::DecodeState& state) {
  nn::SavedActivations saved;
  nn::ModuleContext ctx{sharded_.device, sharded_.kernels, saved, &state};
  zero::ZeroStrategy& strategy = sharded_.strategy;
  Tensor x = ids;
  try {
    for (std::size_t b = 0; b < sharded_.model.num_blocks(); ++b) {
      strategy.before_forward(b);
      x = sharded_.model.block(b).module->forward(strategy.parameters(b), x, ctx);
      saved.clear();  // nothing is kept for a backward
      strategy.after_forward(b);
    }
  } catch (...) {
    strategy.end_forward_only();
    throw;
  }
  strategy.end_forward_only();
  return x;
}

void ShardedDecoder::select(const Tensor& logits, std::int64_t classes,
                            const nn::math::TokenSampling& sampling, std::int64_t position,
                            const std::vector<std::vector<std::int32_t>>& prompts,
                            const Tensor& selected, const Tensor& ids) {
  DeviceContext& device = sharded_.device;
  if (sharded_.comm.rank() == 0) {
    const bool past_every_prompt =
        std::all_of(prompts.begin(), prompts.end(), [&](const std::vector<std::int32_t>& prompt) {
          return position >= static_cast<std::int64_t>(prompt.size());
        });
    if (past_every_prompt) {
      sharded_.kernels.select_tokens(device, logits, classes, sampling, ids);
    } else {
      sharded_.kernels.select_tokens(device, logits, classes, sampling, selected);
      for (std::size_t b = 0; b < prompts.size(); ++b) {
        if (position < static_cast<std::int64_t>(prompts[b].size())) continue;
        const auto row = static_cast<std::int64_t>(b);
        device.ops().copy(selected.view(row, Shape{1}), ids.view(row, Shape{1}));
      }
    }
  }
  if (sharded_.comm.world_size() > 1) sharded_.comm.broadcast(ids, 0)->wait();
}

// Note [A stream per row]
// One stream shared by a batch would hand out its numbers in row order, so a row's draws
// would depend on how many rows come before it and on when they finish. Instead row b's
// token at position p is draw p of stream b of the seed (math::sampling_draw of
// sampling_row_key(seed, b), the stream generate::TokenSampler's `stream` b draws from), from
// its own logits, whatever the other rows hold: the same prompt at the same row index and seed
// draws the same tokens in any batch (up to the last bits of the logits, which a prefill of
// another length may round otherwise: Note [Decoding the sharded model]), and row 0 draws what
// that prompt alone draws.
std::vector<std::vector<std::int32_t>> ShardedDecoder::generate(
    const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
    const generate::SamplingOptions& sampling, std::int64_t vocab_limit) {
  const auto rows = static_cast<std::int64_t>(prompts.size());
  ZT_CHECK(rows > 0 && new_tokens > 0, "decoding needs a prompt and a token to generate");
  ZT_CHECK(vocab_limit > 0, "decoding needs a vocabulary");
  std::size_t shortest = prompts.front().size();
  std::size_t longest = 0;
  for (const std::vector<std::int32_t>& prompt : prompts) {
    shortest = std::min(shortest, prompt.size());
    longest = std::max(longest, prompt.size());
    ZT_CHECK(!prompt.empty(), "a decoding prompt needs at least one token");
    // User data: checked on the host, as the trainer checks every batch.
    sharded_.model.block(0).module->check_input(
        Tensor::wrap(const_cast<std::int32_t*>(prompt.data()),
                     Shape{1, static_cast<std::int64_t>(prompt.size())}, DType::kI32));
  }
  if (static_cast<std::int64_t>(longest) + new_tokens > max_len_) {
    throw Error("decoding " + std::to_string(new_tokens) + " token(s) after a prompt of " +
                std::to_string(longest) + " does not fit in the model's " +
                std::to_string(max_len_) + " positions (model.seq_len)");
  }
  DeviceContext& device = sharded_.device;
  MemoryTracker& tracker = device.tracker();
  nn::DecodeState state(rows, max_len_);

  // Prefill: the common shortest length of every row in one call.
  const auto prefill = static_cast<std::int64_t>(shortest);
  std::vector<std::int32_t> prefill_ids;
  for (const std::vector<std::int32_t>& prompt : prompts) {
    prefill_ids.insert(prefill_ids.end(), prompt.begin(), prompt.begin() + prefill);
  }
  Tensor ids =
      Tensor::empty(Shape{rows, prefill}, DType::kI32, tracker, MemoryCategory::kActivations);
  device.ops().copy(Tensor::wrap(prefill_ids.data(), ids.shape(), DType::kI32), ids);

  // Every later position's ids (position prefill + s in slot s, (positions, B)), holding the
  // prompts' tails from the start (Note [Ids stay on the device]); a finished row's slots are
  // selected too, and not read.
  const std::int64_t positions = static_cast<std::int64_t>(longest) + new_tokens - prefill;
  std::vector<std::int32_t> tails(static_cast<std::size_t>(positions * rows), 0);
  for (std::int64_t p = prefill; p < static_cast<std::int64_t>(longest); ++p) {
    for (std::size_t b = 0; b < prompts.size(); ++b) {
      if (p >= static_cast<std::int64_t>(prompts[b].size())) continue;
      tails[static_cast<std::size_t>((p - prefill) * rows) + b] =
          prompts[b][static_cast<std::size_t>(p)];
    }
  }
  const Tensor history =
      Tensor::empty(Shape{positions, rows}, DType::kI32, tracker, MemoryCategory::kActivations);
  device.ops().copy(Tensor::wrap(tails.data(), history.shape(), DType::kI32), history);
  const Tensor selected =
      Tensor::empty(Shape{rows, 1}, DType::kI32, tracker, MemoryCategory::kActivations);
  nn::math::TokenSampling token_sampling{.temperature = static_cast<float>(sampling.temperature),
                                         .top_k = sampling.top_k,
                                         .seed = sampling.seed};

  Tensor logits = forward(ids, state);
  state.advance(prefill);
  for (std::int64_t s = 0; s < positions; ++s) {
    const Tensor slot = history.view(s * rows, Shape{rows, 1});
    token_sampling.step = static_cast<std::uint64_t>(prefill + s);
    select(logits, vocab_limit, token_sampling, prefill + s, prompts, selected, slot);
    if (s + 1 == positions) break;
    logits = forward(slot, state);
    state.advance(1);
  }

  // The one read of the ids: after the last selection.
  device.ops().copy(history, Tensor::wrap(tails.data(), history.shape(), DType::kI32));
  device.synchronize();
  std::vector<std::vector<std::int32_t>> generated(prompts.size());
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    const auto first = static_cast<std::int64_t>(prompts[b].size()) - prefill;
    for (std::int64_t s = first; s < first + new_tokens; ++s) {
      generated[b].push_back(tails[static_cast<std::size_t>(s * rows) + b]);
    }
  }
  return generated;
}

}  // namespace zt::engine
