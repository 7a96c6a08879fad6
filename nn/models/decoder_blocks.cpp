// make_decoder: a family's blocks in the order every decoder-only model has them.
#include "nn/models/decoder_blocks.h"

#include <string>

namespace zt::nn {

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
