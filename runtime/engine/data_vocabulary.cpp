// Resolving the data's vocabulary from model.data_vocab_size, data.tokenizer or
// checkpoint.init_from's config.json (Note [Padded vocabulary] in
// nn/kernels/math/cross_entropy_math.h).
#include "runtime/engine/data_vocabulary.h"

#include <optional>
#include <string>

#include "core/error.h"
#include "runtime/checkpoint/hf_config.h"

namespace zt::engine {
namespace {

// The vocabulary the data or the weights came with, when something records one.
std::optional<std::int64_t> recorded_vocab_size(const Config& config,
                                                const data::BpeTokenizer* tokenizer) {
  if (tokenizer != nullptr) return tokenizer->vocab_size();
  if (!config.data.tokenizer.empty()) {
    return data::BpeTokenizer::load(config.data.tokenizer).vocab_size();
  }
  if (!config.checkpoint.init_from.empty()) {
    return checkpoint::hf_config_vocab_size(config.checkpoint.init_from);
  }
  return std::nullopt;
}

}  // namespace

std::int64_t data_vocab_size(const Config& config, const data::BpeTokenizer* tokenizer) {
  const ModelConfig& m = config.model;
  if (m.data_vocab_size > m.vocab_size) {
    throw ConfigError(where_set(config, "model.data_vocab_size") +
                      ": model.data_vocab_size = " + std::to_string(m.data_vocab_size) +
                      " is more than model.vocab_size = " + std::to_string(m.vocab_size) +
                      ": the data's tokens must be rows of the model's vocabulary; lower it, or "
                      "raise model.vocab_size");
  }
  if (m.data_vocab_size != 0 || !is_language_model(m.type)) return data_vocabulary(m);
  // A recorded vocabulary larger than the model's is refused where it is used (the token
  // files, the sampler); only a smaller one means padded rows.
  const std::optional<std::int64_t> recorded = recorded_vocab_size(config, tokenizer);
  return recorded && *recorded > 0 && *recorded < m.vocab_size ? *recorded : m.vocab_size;
}

Config with_data_vocab_size(Config config) {
  config.model.data_vocab_size = data_vocab_size(config);
  return config;
}

}  // namespace zt::engine
