// Decoding through the ZeRO strategy's hooks: a prefill of the prompts' common length, then
// one position per call with teacher forcing, rank 0's tokens broadcast to every rank.
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
// Each rank computes the same logits from the same parameters, but nothing promises the
// bits agree across ranks (kernels, reduction orders), and ranks that chose different tokens
// would go on to decode different sequences. So rank 0 alone reads its logits and selects
// (generate::TokenSampler, on the host), and the selected ids go to every rank by one
// broadcast of B int32 per position on the control lane, into the device buffer that is the
// next call's input. Each position costs a host wait for the logits on rank 0 and one for
// the broadcast on every rank; selecting on the device (argmax or a draw from a
// counter-based stream, with no host wait per token) is what comes next.
//
// Attention runs on the device's default kernels, not runtime.attention's choice: cuDNN's
// graphs are built for training's square shape, and a decode step's queries attend over a
// longer key sequence (generate::Decoder does the same).

ShardedDecoder::ShardedDecoder(const ShardedModel& model, std::int64_t max_len)
    : sharded_(model), kernels_(nn::kernel_backend_for(model.device.device())), max_len_(max_len) {}

Tensor ShardedDecoder::forward(const Tensor& ids, nn::DecodeState& state) {
  nn::SavedActivations saved;
  nn::ModuleContext ctx{sharded_.device, kernels_, saved, &state};
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

std::vector<float> ShardedDecoder::last_logits(const Tensor& logits) {
  const std::int64_t rows = logits.dim(0);
  const std::int64_t positions = logits.dim(1);
  const std::int64_t vocab = logits.dim(2);
  const DType dtype = logits.dtype();
  const std::size_t row_bytes = static_cast<std::size_t>(vocab) * dtype_size(dtype);
  std::vector<std::byte> host_bytes(static_cast<std::size_t>(rows) * row_bytes);
  for (std::int64_t b = 0; b < rows; ++b) {
    const Tensor last = logits.view((b * positions + positions - 1) * vocab, Shape{vocab});
    sharded_.device.ops().copy(
        last, Tensor::wrap(host_bytes.data() + static_cast<std::size_t>(b) * row_bytes,
                           last.shape(), dtype));
  }
  sharded_.device.synchronize();
  std::vector<float> values(static_cast<std::size_t>(rows * vocab));
  convert_elements(host_bytes.data(), dtype, values.data(), DType::kF32, values.size());
  return values;
}

void ShardedDecoder::broadcast_ids(std::vector<std::int32_t>& ids, const Tensor& buffer) {
  const Tensor host = Tensor::wrap(ids.data(), buffer.shape(), DType::kI32);
  DeviceContext& device = sharded_.device;
  if (sharded_.comm.rank() == 0) device.ops().copy(host, buffer);
  sharded_.comm.broadcast(buffer, 0)->wait();
  device.ops().copy(buffer, host);
  device.compute_stream().synchronize();
}

// Note [A stream per row]
// One sampler shared by a batch draws its numbers in row order, so a row's draws would depend
// on how many rows come before it and on when they finish. With a sampler per row
// (zerotrain::Engine::generate keys row b's by (seed, b): TokenSampler's `stream`), row b's
// n-th token is drawn with the n-th number of its own stream from its own logits, whatever the
// other rows hold: the same prompt at the same row index and seed draws the same tokens in any
// batch (up to the last bits of the logits, which a prefill of another length may round
// otherwise: Note [Decoding the sharded model]), and row 0 draws what that prompt alone draws.
std::vector<std::vector<std::int32_t>> ShardedDecoder::generate(
    const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
    generate::TokenSampler& sampler) {
  return decode(prompts, new_tokens,
                [&](std::size_t, std::span<const float> logits) { return sampler.sample(logits); });
}

std::vector<std::vector<std::int32_t>> ShardedDecoder::generate(
    const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
    std::span<generate::TokenSampler> row_samplers) {
  ZT_CHECK(sharded_.comm.rank() != 0 || row_samplers.size() == prompts.size(),
           "decoding needs one sampler per prompt on rank 0");
  return decode(prompts, new_tokens, [&](std::size_t row, std::span<const float> logits) {
    return row_samplers[row].sample(logits);
  });
}

std::vector<std::vector<std::int32_t>> ShardedDecoder::decode(
    const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t new_tokens,
    const SelectToken& select) {
  const auto rows = static_cast<std::int64_t>(prompts.size());
  ZT_CHECK(rows > 0 && new_tokens > 0, "decoding needs a prompt and a token to generate");
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
  const bool selects = sharded_.comm.rank() == 0;
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
  Tensor logits = forward(ids, state);
  state.advance(prefill);

  const Tensor next_ids =
      Tensor::empty(Shape{rows, 1}, DType::kI32, tracker, MemoryCategory::kActivations);
  std::vector<std::int32_t> next(static_cast<std::size_t>(rows));
  std::vector<std::vector<std::int32_t>> generated(static_cast<std::size_t>(rows));
  for (std::int64_t position = prefill;; ++position) {
    // The token at `position` of every row: its prompt's, or selected from its logits.
    if (selects) {
      const std::vector<float> last = last_logits(logits);
      const auto vocab = static_cast<std::size_t>(logits.dim(2));
      for (std::size_t b = 0; b < next.size(); ++b) {
        if (position < static_cast<std::int64_t>(prompts[b].size())) {
          next[b] = prompts[b][static_cast<std::size_t>(position)];
        } else if (std::ssize(generated[b]) < new_tokens) {
          next[b] = select(b, std::span(last).subspan(b * vocab, vocab));
        }  // else a finished row: fed its last token again, its result unread
      }
    } else {
      device.synchronize();  // the forward reads `next_ids`: done before it is overwritten
    }
    broadcast_ids(next, next_ids);
    bool done = true;
    for (std::size_t b = 0; b < next.size(); ++b) {
      if (position >= static_cast<std::int64_t>(prompts[b].size()) &&
          std::ssize(generated[b]) < new_tokens) {
        generated[b].push_back(next[b]);
      }
      done = done && std::ssize(generated[b]) == new_tokens;
    }
    if (done) break;
    logits = forward(next_ids, state);
    state.advance(1);
  }
  return generated;
}

}  // namespace zt::engine
