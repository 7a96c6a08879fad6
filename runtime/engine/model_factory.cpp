// Model and data selection from the config.
#include "runtime/engine/model_factory.h"

#include <filesystem>
#include <string>
#include <vector>

#include "core/config/config_schema.h"
#include "core/error.h"
#include "data/lm_batch.h"
#include "data/token_corpus.h"
#include "nn/models/gpt.h"
#include "nn/models/mlp.h"

namespace zt::engine {
namespace {

// The largest vocabulary the synthetic Markov corpus supports (its transition table is
// vocab² doubles and its stationary distribution is found by power iteration).
constexpr std::int64_t kMaxSyntheticVocab = 1024;

namespace fs = std::filesystem;

data::TokenFileFormat token_file_format(DataFormat format) {
  switch (format) {
    case DataFormat::kAuto:
      return data::TokenFileFormat::kAuto;
    case DataFormat::kZerotrain:
      return data::TokenFileFormat::kZerotrain;
    case DataFormat::kLlmc:
      return data::TokenFileFormat::kLlmc;
    case DataFormat::kNanogpt:
      return data::TokenFileFormat::kNanogpt;
  }
  throw InternalError("unknown data.format");
}

// The files of data.path: its entries in order, each glob pattern expanded in sorted order.
std::vector<fs::path> token_paths(const Config& config) {
  std::vector<fs::path> paths;
  for (const std::string& entry : data_path_entries(config.data)) {
    const std::vector<fs::path> matched = data::expand_token_path(entry);
    if (matched.empty()) {
      throw ConfigError(where_set(config, "data.path") + ": data.path: the pattern '" + entry +
                        "' matches no file; check the directory and the pattern");
    }
    paths.insert(paths.end(), matched.begin(), matched.end());
  }
  return paths;
}

// A zerotrain token file records its vocabulary, which must fit in the model's.
void check_vocabulary(const Config& config, const data::TokenShard& shard) {
  if (!shard.header_vocab_size || *shard.header_vocab_size <= config.model.vocab_size) return;
  const std::uint32_t file_vocab = *shard.header_vocab_size;
  const KeySpec* key = find_config_key("model", "vocab_size");
  const auto largest = static_cast<std::int64_t>(*key->range.max);
  // Advice the key can take: past its maximum the file, not the config, must change.
  const std::string advice = file_vocab <= largest
                                 ? "set model.vocab_size >= " + std::to_string(file_vocab)
                                 : "that is more than model.vocab_size can be (at most " +
                                       std::to_string(largest) +
                                       "); re-create the token file with a vocabulary of at most " +
                                       std::to_string(largest) + " tokens";
  throw ConfigError(where_set(config, "model.vocab_size") +
                    ": model.vocab_size = " + std::to_string(config.model.vocab_size) +
                    " is smaller than the " + std::to_string(file_vocab) +
                    "-token vocabulary of data.path '" + shard.path.string() + "'; " + advice);
}

std::unique_ptr<data::BatchSource> make_token_source(const Config& config) {
  const auto seed = static_cast<std::uint64_t>(config.run.seed);
  if (config.data.path.empty()) {
    if (config.model.vocab_size > kMaxSyntheticVocab) {
      throw ConfigError(where_set(config, "model.vocab_size") +
                        ": model.vocab_size = " + std::to_string(config.model.vocab_size) +
                        ": the synthetic corpus (data.path = \"\") supports at most " +
                        std::to_string(kMaxSyntheticVocab) +
                        " tokens; lower model.vocab_size or set data.path to a token file");
    }
    return data::make_markov_source(seed, static_cast<std::int32_t>(config.model.vocab_size),
                                    config.model.seq_len, config.data.synthetic_peakedness);
  }
  const auto vocab_size = static_cast<std::uint32_t>(config.model.vocab_size);
  std::vector<data::TokenShard> shards;
  for (const fs::path& path : token_paths(config)) {
    shards.push_back(data::open_token_shard(path, token_file_format(config.data.format)));
    check_vocabulary(config, shards.back());
  }
  return data::make_token_corpus_source(std::move(shards), vocab_size, config.model.seq_len, seed);
}

}  // namespace

nn::Model make_model(const Config& config) {
  switch (config.model.type) {
    case ModelType::kMlp:
      return nn::make_mlp(
          {config.model.input_dim, config.model.hidden_dim, config.model.num_classes});
    case ModelType::kGpt:
      try {
        return nn::make_gpt({config.model.n_layer, config.model.n_head, config.model.d_model,
                             config.model.vocab_size, config.model.seq_len,
                             config.model.tie_embeddings});
      } catch (const ConfigError& e) {
        // The shape check names the keys; say where the head count was set.
        throw ConfigError(where_set(config, "model.n_head") + ": " + e.what());
      }
  }
  throw InternalError("unknown model type");
}

std::unique_ptr<data::BatchSource> make_batch_source(const Config& config) {
  if (config.model.type == ModelType::kGpt) return make_token_source(config);
  if (!config.data.path.empty()) {
    throw ConfigError(where_set(config, "data.path") + ": data.path = \"" + config.data.path +
                      "\": model.type = \"mlp\" trains on the built-in synthetic "
                      "classification task; leave data.path empty or use model.type = \"gpt\"");
  }
  return data::make_synthetic_classification_source(static_cast<std::uint64_t>(config.run.seed),
                                                    config.model.input_dim,
                                                    config.model.num_classes);
}

}  // namespace zt::engine
