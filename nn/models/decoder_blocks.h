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

// Blocks "embedding", "block.0" .. "block.<n_layer - 1>", "head", with the head tied to the
// embedding when the family says so (Model::tie).
Model make_decoder(const DecoderBlocks& blocks);

}  // namespace zt::nn
