// make_decoder: a family's blocks in the order every decoder-only model has them.
#include "nn/models/decoder_blocks.h"

#include <string>

#include "nn/layers/dropout.h"

namespace zt::nn {

std::unique_ptr<Module> with_embedding_dropout(std::unique_ptr<Module> embedding, float p) {
  if (p <= 0.0f) return embedding;
  auto block = std::make_unique<Sequential>();
  block->add(std::move(embedding));
  block->add(std::make_unique<Dropout>(p, 0, math::DropoutSite::kEmbedding));
  return block;
}

void add_dropout(Sequential& branch, float p, std::int64_t layer, math::DropoutSite site) {
  if (p > 0.0f) branch.add(std::make_unique<Dropout>(p, layer, site));
}

Model make_decoder(const DecoderBlocks& blocks) {
  Model model(blocks.family());
  model.add_block("embedding", blocks.embedding());
  for (std::int64_t layer = 0; layer < blocks.n_layer(); ++layer) {
    model.add_block("block." + std::to_string(layer), blocks.block(layer));
  }
  model.add_block("head", blocks.head());
  if (const std::optional<DecoderBlocks::TiedHead> tied = blocks.tied_head()) {
    model.tie({model.num_blocks() - 1, tied->head_parameter, 0, tied->embedding_parameter});
  }
  return model;
}

}  // namespace zt::nn
