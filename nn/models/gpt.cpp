// Builds the GPT model block by block. Each transformer block is pre-LN:
//   x = x + attn(ln_1(x));  x = x + mlp(ln_2(x)),  mlp = fc (C -> 4C), GELU, proj (4C -> C)
#include "nn/models/gpt.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/layers/causal_self_attention.h"
#include "nn/layers/embedding.h"
#include "nn/layers/gelu_mlp.h"
#include "nn/layers/layer_norm.h"
#include "nn/layers/linear.h"
#include "nn/layers/residual.h"
#include "nn/layers/sequential.h"

namespace zt::nn {
namespace {

void check_shape(const GptShape& shape) {
  const auto positive = [](const char* key, std::int64_t value) {
    if (value <= 0) {
      throw ConfigError(std::string(key) + ": expected an integer > 0, got " +
                        std::to_string(value));
    }
  };
  positive("model.n_layer", shape.n_layer);
  positive("model.n_head", shape.n_head);
  positive("model.d_model", shape.d_model);
  positive("model.vocab_size", shape.vocab_size);
  positive("model.seq_len", shape.seq_len);
  if (shape.d_model % shape.n_head != 0) {
    throw ConfigError("model.d_model = " + std::to_string(shape.d_model) +
                      " must be divisible by model.n_head = " + std::to_string(shape.n_head));
  }
}

std::unique_ptr<Module> make_block(const GptShape& shape) {
  const std::int64_t c = shape.d_model;
  // GPT-2 scales the residual projections by 1/sqrt(2 n_layer): two per block add to the
  // residual stream, so its variance stays bounded as the model deepens.
  const float proj_std = 0.02f / std::sqrt(2.0f * static_cast<float>(shape.n_layer));
  auto attention = std::make_unique<Sequential>();
  attention->add(std::make_unique<LayerNorm>("ln_1", c));
  attention->add(std::make_unique<CausalSelfAttention>("attn", c, shape.n_head, proj_std));
  auto mlp = std::make_unique<Sequential>();
  mlp->add(std::make_unique<LayerNorm>("ln_2", c));
  // fc, GELU, proj as one module, so that the GELU runs inside the GEMMs.
  mlp->add(std::make_unique<GeluMlp>("mlp.fc", "mlp.proj", c, 4 * c, Init::normal(0.02f),
                                     Init::normal(proj_std)));
  auto block = std::make_unique<Sequential>();
  block->add(std::make_unique<Residual>(std::move(attention)));
  block->add(std::make_unique<Residual>(std::move(mlp)));
  return block;
}

}  // namespace

Model make_gpt(const GptShape& shape) {
  check_shape(shape);
  Model model("gpt");
  model.add_block("embedding",
                  std::make_unique<Embedding>(shape.vocab_size, shape.seq_len, shape.d_model));
  for (std::int64_t layer = 0; layer < shape.n_layer; ++layer) {
    model.add_block("block." + std::to_string(layer), make_block(shape));
  }
  auto head = std::make_unique<Sequential>();
  head->add(std::make_unique<LayerNorm>("ln_f", shape.d_model));
  head->add(std::make_unique<Linear>("lm_head", shape.d_model, shape.vocab_size, false,
                                     Init::normal(0.02f)));
  model.add_block("head", std::move(head));
  if (shape.tie_embeddings) {
    // The head's lm_head.weight (parameter 2, after ln_f's two) is the embedding's wte
    // (parameter 0): both are (vocab_size, d_model).
    model.tie({model.num_blocks() - 1, 2, 0, 0});
  }
  return model;
}

std::int64_t gpt_parameter_count(const GptShape& shape) {
  const std::int64_t c = shape.d_model;
  const std::int64_t per_block = 12 * c * c + 13 * c;  // 2 LN, qkv, proj, fc, mlp proj
  const std::int64_t embedding = (shape.vocab_size + shape.seq_len) * c;
  const std::int64_t head = 2 * c + (shape.tie_embeddings ? 0 : shape.vocab_size * c);
  return embedding + shape.n_layer * per_block + head;
}

}  // namespace zt::nn
