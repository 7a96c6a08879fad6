// The GPT-2-style decoder: block "embedding" (token + position), blocks "block.0".. (pre-LN
// transformer blocks), block "head" (final LayerNorm + Linear to vocabulary logits).
#pragma once

#include <cstdint>

#include "nn/model.h"

namespace zt::nn {

struct GptShape {
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t d_model = 0;
  std::int64_t vocab_size = 0;
  std::int64_t seq_len = 0;  // the longest sequence: rows of the position embedding
  bool tie_embeddings = false;
  // Dropout probability nanoGPT's way: after the embedding, on the attention probabilities,
  // and on the attention's and the MLP's output before each residual add (Note [Dropout
  // sites] in decoder_blocks.h). 0: no dropout at all.
  float dropout = 0.0f;
};

// Throws zt::ConfigError for a shape that cannot be built (d_model not divisible by n_head,
// non-positive sizes). With tie_embeddings the head's lm_head.weight is tied to the
// embedding's wte (Model::tie).
Model make_gpt(const GptShape& shape);

// Parameters of make_gpt(shape), in closed form: (V + S) C + L (12 C^2 + 13 C) + 2 C + V C.
std::int64_t gpt_parameter_count(const GptShape& shape);

}  // namespace zt::nn
