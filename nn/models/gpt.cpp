// Builds the GPT model from its family of blocks (DecoderBlocks). Each transformer block is
// pre-LN:
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
#include "nn/models/decoder_blocks.h"

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

// GPT-2's blocks: token + position embedding, pre-LN blocks, final LayerNorm and lm_head.
class GptBlocks final : public DecoderBlocks {
 public:
  explicit GptBlocks(const GptShape& shape) : shape_(shape) {}

  std::string family() const override { return "gpt"; }
  std::int64_t n_layer() const override { return shape_.n_layer; }

  std::unique_ptr<Module> embedding() const override {
    return with_embedding_dropout(
        std::make_unique<Embedding>(shape_.vocab_size, shape_.seq_len, shape_.d_model),
        shape_.dropout);
  }

  std::unique_ptr<Module> block(std::int64_t layer) const override {
    const std::int64_t c = shape_.d_model;
    // GPT-2 scales the residual projections by 1/sqrt(2 n_layer): two per block add to the
    // residual stream, so its variance stays bounded as the model deepens.
    const float proj_std = 0.02f / std::sqrt(2.0f * static_cast<float>(shape_.n_layer));
    auto attention = std::make_unique<Sequential>();
    attention->add(std::make_unique<LayerNorm>("ln_1", c));
    attention->add(std::make_unique<CausalSelfAttention>("attn", c, shape_.n_head, proj_std,
                                                         AttentionDropout{shape_.dropout, layer}));
    add_dropout(*attention, shape_.dropout, layer, math::DropoutSite::kAttentionOutput);
    auto mlp = std::make_unique<Sequential>();
    mlp->add(std::make_unique<LayerNorm>("ln_2", c));
    // fc, GELU, proj as one module, so that the GELU runs inside the GEMMs.
    mlp->add(std::make_unique<GeluMlp>("mlp.fc", "mlp.proj", c, 4 * c, Init::normal(0.02f),
                                       Init::normal(proj_std)));
    add_dropout(*mlp, shape_.dropout, layer, math::DropoutSite::kMlpOutput);
    auto block = std::make_unique<Sequential>();
    block->add(std::make_unique<Residual>(std::move(attention)));
    block->add(std::make_unique<Residual>(std::move(mlp)));
    return block;
  }

  std::unique_ptr<Module> head() const override {
    auto head = std::make_unique<Sequential>();
    head->add(std::make_unique<LayerNorm>("ln_f", shape_.d_model));
    head->add(std::make_unique<Linear>("lm_head", shape_.d_model, shape_.vocab_size, false,
                                       Init::normal(0.02f)));
    return head;
  }

  // lm_head.weight (the head's parameter 2, after ln_f's two) is the embedding's wte
  // (parameter 0): both are (vocab_size, d_model).
  std::optional<TiedHead> tied_head() const override {
    if (!shape_.tie_embeddings) return std::nullopt;
    return TiedHead{2, 0};
  }

 private:
  GptShape shape_;
};

}  // namespace

Model make_gpt(const GptShape& shape) {
  check_shape(shape);
  return make_decoder(GptBlocks(shape));
}

std::int64_t gpt_parameter_count(const GptShape& shape) {
  const std::int64_t c = shape.d_model;
  const std::int64_t per_block = 12 * c * c + 13 * c;  // 2 LN, qkv, proj, fc, mlp proj
  const std::int64_t embedding = (shape.vocab_size + shape.seq_len) * c;
  const std::int64_t head = 2 * c + (shape.tie_embeddings ? 0 : shape.vocab_size * c);
  return embedding + shape.n_layer * per_block + head;
}

}  // namespace zt::nn
