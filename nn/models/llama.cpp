// Builds the Llama model from its family of blocks (DecoderBlocks). Each transformer block is
// pre-norm:
//   x = x + attn(rms_1(x));  x = x + mlp(rms_2(x)),  mlp = fc (C -> 2F: gate | up),
//   silu(gate) * up, proj (F -> C)
// attn turns q and k by rotary position embeddings, so the embedding has no wpe.
#include "nn/models/llama.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/layers/embedding.h"
#include "nn/layers/grouped_query_attention.h"
#include "nn/layers/linear.h"
#include "nn/layers/residual.h"
#include "nn/layers/rms_norm.h"
#include "nn/layers/sequential.h"
#include "nn/layers/swiglu_mlp.h"
#include "nn/models/decoder_blocks.h"

namespace zt::nn {
namespace {

void check_positive(const char* key, std::int64_t value) {
  if (value <= 0) {
    throw ConfigError(std::string(key) + ": expected an integer > 0, got " + std::to_string(value));
  }
}

void check_shape(const LlamaShape& shape) {
  check_positive("model.n_layer", shape.n_layer);
  check_positive("model.n_head", shape.n_head);
  check_positive("model.n_kv_head", shape.n_kv_head);
  check_positive("model.d_model", shape.d_model);
  check_positive("model.ffn_dim", shape.ffn_dim);
  check_positive("model.vocab_size", shape.vocab_size);
  check_positive("model.seq_len", shape.seq_len);
  if (shape.d_model % shape.n_head != 0) {
    throw ConfigError("model.d_model = " + std::to_string(shape.d_model) +
                      " must be divisible by model.n_head = " + std::to_string(shape.n_head));
  }
  if (shape.n_head % shape.n_kv_head != 0) {
    throw ConfigError("model.n_kv_head = " + std::to_string(shape.n_kv_head) +
                      " must divide model.n_head = " + std::to_string(shape.n_head) +
                      " (each key/value head serves the same number of query heads)");
  }
  const std::int64_t head_dim = shape.d_model / shape.n_head;
  if (head_dim % 2 != 0) {
    throw ConfigError("model.d_model / model.n_head = " + std::to_string(head_dim) +
                      " is the head size, which rotary embeddings turn in pairs: it must be "
                      "even; change model.d_model or model.n_head");
  }
  if (!(std::isfinite(shape.rope_theta) && shape.rope_theta > 0.0f)) {
    throw ConfigError("model.rope_theta: expected a number > 0, got " +
                      std::to_string(shape.rope_theta));
  }
  if (!(std::isfinite(shape.norm_eps) && shape.norm_eps > 0.0f)) {
    throw ConfigError("model.norm_eps: expected a number > 0, got " +
                      std::to_string(shape.norm_eps));
  }
}

// Llama's blocks: token embedding, pre-norm blocks, final RMSNorm and lm_head.
class LlamaBlocks final : public DecoderBlocks {
 public:
  explicit LlamaBlocks(const LlamaShape& shape) : shape_(shape) {}

  std::string family() const override { return "llama"; }
  std::int64_t n_layer() const override { return shape_.n_layer; }

  std::unique_ptr<Module> embedding() const override {
    return with_embedding_dropout(
        std::make_unique<Embedding>(shape_.vocab_size, shape_.seq_len, shape_.d_model,
                                    PositionEmbedding::kNone),
        shape_.dropout);
  }

  std::unique_ptr<Module> block(std::int64_t layer) const override {
    const std::int64_t c = shape_.d_model;
    // The residual projections scaled by 1/sqrt(2 n_layer), as GPT-2's (torchtitan's Llama
    // scales them by depth too): the residual stream's variance stays bounded with depth.
    const float proj_std = 0.02f / std::sqrt(2.0f * static_cast<float>(shape_.n_layer));
    auto attention = std::make_unique<Sequential>();
    attention->add(std::make_unique<RmsNorm>("rms_1", c, shape_.norm_eps));
    attention->add(std::make_unique<GroupedQueryAttention>(
        "attn", GroupedQueryAttentionShape{c, shape_.n_head, shape_.n_kv_head, shape_.rope_theta},
        proj_std, AttentionDropout{shape_.dropout, layer}));
    add_dropout(*attention, shape_.dropout, layer, math::DropoutSite::kAttentionOutput);
    auto mlp = std::make_unique<Sequential>();
    mlp->add(std::make_unique<RmsNorm>("rms_2", c, shape_.norm_eps));
    mlp->add(std::make_unique<SwiGluMlp>("mlp.fc", "mlp.proj", c, shape_.ffn_dim,
                                         Init::normal(0.02f), Init::normal(proj_std)));
    add_dropout(*mlp, shape_.dropout, layer, math::DropoutSite::kMlpOutput);
    auto block = std::make_unique<Sequential>();
    block->add(std::make_unique<Residual>(std::move(attention)));
    block->add(std::make_unique<Residual>(std::move(mlp)));
    return block;
  }

  std::unique_ptr<Module> head() const override {
    auto head = std::make_unique<Sequential>();
    head->add(std::make_unique<RmsNorm>("rms_f", shape_.d_model, shape_.norm_eps));
    head->add(std::make_unique<Linear>("lm_head", shape_.d_model, shape_.vocab_size, false,
                                       Init::normal(0.02f)));
    return head;
  }

  // lm_head.weight (the head's parameter 1, after rms_f's weight) is the embedding's wte
  // (its only parameter): both are (vocab_size, d_model).
  std::optional<TiedHead> tied_head() const override {
    if (!shape_.tie_embeddings) return std::nullopt;
    return TiedHead{1, 0};
  }

 private:
  LlamaShape shape_;
};

}  // namespace

std::int64_t llama_default_ffn_dim(std::int64_t d_model) {
  constexpr std::int64_t kMultipleOf = 256;
  const std::int64_t two_thirds_of_4c = 8 * d_model / 3;
  return (two_thirds_of_4c + kMultipleOf - 1) / kMultipleOf * kMultipleOf;
}

Model make_llama(const LlamaShape& shape) {
  check_shape(shape);
  return make_decoder(LlamaBlocks(shape));
}

std::int64_t llama_parameter_count(const LlamaShape& shape) {
  const std::int64_t c = shape.d_model;
  const std::int64_t head_dim = c / shape.n_head;
  const std::int64_t attention = (shape.n_head + 2 * shape.n_kv_head) * head_dim * c + c * c;
  const std::int64_t per_block = 2 * c + attention + 3 * c * shape.ffn_dim;  // 2 RMSNorms, MLP
  const std::int64_t head = c + (shape.tie_embeddings ? 0 : shape.vocab_size * c);
  return shape.vocab_size * c + shape.n_layer * per_block + head;
}

}  // namespace zt::nn
