// The data's vocabulary: the token ids the data may hold, the classes of the loss's softmax
// and the ids sampling may draw, when model.vocab_size pads the model past it (Note [Padded
// vocabulary] in nn/kernels/math/cross_entropy_math.h).
#pragma once

#include <cstdint>

#include "core/config/config.h"
#include "data/bpe_tokenizer.h"

namespace zt::engine {

// model.data_vocab_size when set. Else, for a language model whose model.vocab_size pads past
// it: data.tokenizer's vocabulary (`tokenizer` when the caller has loaded it, else read from
// data.tokenizer), or the vocab_size of checkpoint.init_from's config.json. Else
// model.vocab_size. ConfigError, starting where the key was set, when model.data_vocab_size
// exceeds model.vocab_size; what BpeTokenizer::load and hf_config_vocab_size throw.
std::int64_t data_vocab_size(const Config& config, const data::BpeTokenizer* tokenizer = nullptr);

// `config` with model.data_vocab_size set to data_vocab_size(config), so that what reads it
// later (the data sources, the loss) resolves it once.
Config with_data_vocab_size(Config config);

// model.data_vocab_size as resolved, or model.vocab_size while it is 0.
inline std::int64_t data_vocabulary(const ModelConfig& model) {
  return model.data_vocab_size != 0 ? model.data_vocab_size : model.vocab_size;
}

}  // namespace zt::engine
