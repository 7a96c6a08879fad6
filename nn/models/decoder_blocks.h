// DecoderBlocks: what makes one family of decoder-only language models (GPT-2, Llama): its
// embedding, its transformer block, its head, and whether the head's weight is the
// embedding's. make_decoder assembles any family into the one block layout the trainer, the
// ZeRO stages, checkpoints and generation rely on, so a new family is a new DecoderBlocks,
// not a new trainer path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nn/kernels/math/dropout_math.h"
#include "nn/layers/sequential.h"
#include "nn/model.h"

namespace zt::nn {

class DecoderBlocks {
 public:
  virtual ~DecoderBlocks() = default;

  // The model's name ("gpt", "llama"): Model::name(), in logs and checkpoints.
  virtual std::string family() const = 0;
  virtual std::int64_t n_layer() const = 0;
  // Token ids (B, T) i32 -> (B, T, C).
  virtual std::unique_ptr<Module> embedding() const = 0;
  // Transformer block `layer` of n_layer(): (B, T, C) -> (B, T, C).
  virtual std::unique_ptr<Module> block(std::int64_t layer) const = 0;
  // (B, T, C) -> logits (B, T, V).
  virtual std::unique_ptr<Module> head() const = 0;

  // A tied head: parameter `head_parameter` of head() is parameter `embedding_parameter` of
  // embedding() (the token embedding).
  struct TiedHead {
    std::size_t head_parameter = 0;
    std::size_t embedding_parameter = 0;
  };
  virtual std::optional<TiedHead> tied_head() const = 0;
};

// Note [Dropout sites]
// With a dropout probability p > 0 a family applies nanoGPT's dropout: after the embedding
// (with_embedding_dropout) and at the end of each residual branch, the attention's and the
// MLP's output projection before the residual add (add_dropout, layer = the block's index),
// and inside the attention on its probabilities (the attention layer's AttentionDropout{p,
// layer}, site kAttentionProbs: Note [Attention dropout] in attention_dropout_math.h). With
// p = 0 no Dropout module is built and the attention draws no mask, so the model is the one
// without dropout, bit for bit.

// `embedding` followed by dropout (layer 0, site kEmbedding) when p > 0; `embedding` itself
// otherwise (its parameters and input check are the block's either way).
std::unique_ptr<Module> with_embedding_dropout(std::unique_ptr<Module> embedding, float p);
// Appends a Dropout(p, layer, site) to `branch` when p > 0.
void add_dropout(Sequential& branch, float p, std::int64_t layer, math::DropoutSite site);

// Blocks "embedding", "block.0" .. "block.<n_layer - 1>", "head", with the head tied to the
// embedding when the family says so (Model::tie).
Model make_decoder(const DecoderBlocks& blocks);

}  // namespace zt::nn
