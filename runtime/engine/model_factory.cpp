// Model and data selection from the config.
#include "runtime/engine/model_factory.h"

#include <filesystem>
#include <string>
#include <vector>

#include "core/config/config_enums.h"
#include "core/config/config_schema.h"
#include "core/error.h"
#include "data/lm_batch.h"
#include "data/token_corpus.h"
#include "nn/models/gpt.h"
#include "nn/models/llama.h"
#include "nn/models/mlp.h"
#include "runtime/engine/data_vocabulary.h"

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

// The files of data.path (or data.val_path, `key`): its entries in order, each glob
// pattern expanded in sorted order.
std::vector<fs::path> token_paths(const Config& config, const std::string& joined,
                                  const std::string& key) {
  std::vector<fs::path> paths;
  for (const std::string& entry : path_entries(joined)) {
    const std::vector<fs::path> matched = data::expand_token_path(entry);
    if (matched.empty()) {
      throw ConfigError(where_set(config, key) + ": " + key + ": the pattern '" + entry +
                        "' matches no file; check the directory and the pattern");
    }
    paths.insert(paths.end(), matched.begin(), matched.end());
  }
  return paths;
}

// A zerotrain token file records its vocabulary, which must fit in the data's.
void check_vocabulary(const Config& config, const data::TokenShard& shard) {
  const std::int64_t data_vocab = data_vocabulary(config.model);
  if (!shard.header_vocab_size || *shard.header_vocab_size <= data_vocab) return;
  const std::uint32_t file_vocab = *shard.header_vocab_size;
  if (data_vocab < config.model.vocab_size) {
    // The model's rows would hold the file's ids, but the data's vocabulary leaves them out.
    throw ConfigError(where_set(config, "model.data_vocab_size") + ": the data's vocabulary of " +
                      std::to_string(data_vocab) +
                      " tokens (model.data_vocab_size, or data.tokenizer's or "
                      "checkpoint.init_from's when it is 0) is smaller than the " +
                      std::to_string(file_vocab) + "-token vocabulary of data.path '" +
                      shard.path.string() + "'; set model.data_vocab_size = " +
                      std::to_string(file_vocab) + " or use the file's tokenizer");
  }
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

// The files `joined` names (data.path or data.val_path, `key`), opened and checked.
std::vector<data::TokenShard> open_shards(const Config& config, const std::string& joined,
                                          const std::string& key) {
  std::vector<data::TokenShard> shards;
  for (const fs::path& path : token_paths(config, joined, key)) {
    shards.push_back(data::open_token_shard(path, token_file_format(config.data.format)));
    check_vocabulary(config, shards.back());
  }
  return shards;
}

// data.path's files, cut by data.val_fraction: the training parts, or the validation ones.
std::vector<data::TokenShard> training_shards(const Config& config, bool validation_parts) {
  std::vector<data::TokenShard> shards = open_shards(config, config.data.path, "data.path");
  if (config.data.val_fraction > 0) {
    for (data::TokenShard& shard : shards) {
      data::ValidationSplit split =
          data::split_off_validation(shard, config.data.val_fraction, config.model.seq_len);
      shard = validation_parts ? std::move(split.validation) : std::move(split.training);
    }
  }
  return shards;
}

std::unique_ptr<data::BatchSource> make_token_source(const Config& config) {
  const auto seed = static_cast<std::uint64_t>(config.run.seed);
  if (config.data.path.empty()) {
    if (data_vocabulary(config.model) > kMaxSyntheticVocab) {
      throw ConfigError(where_set(config, "model.vocab_size") +
                        ": model.vocab_size = " + std::to_string(config.model.vocab_size) +
                        ": the synthetic corpus (data.path = \"\") supports at most " +
                        std::to_string(kMaxSyntheticVocab) +
                        " tokens; lower model.vocab_size or set data.path to a token file");
    }
    return data::make_markov_source(seed, static_cast<std::int32_t>(data_vocabulary(config.model)),
                                    config.model.seq_len, config.data.synthetic_peakedness);
  }
  const auto vocab_size = static_cast<std::uint32_t>(data_vocabulary(config.model));
  return data::make_token_corpus_source(training_shards(config, false), vocab_size,
                                        config.model.seq_len, seed);
}

// The Llama shape of model.*, its defaults (n_kv_head = n_head, Llama's ffn_dim) filled in.
nn::Model make_llama_model(const Config& config) {
  const ModelConfig& m = config.model;
  const nn::LlamaShape shape{m.n_layer,
                             m.n_head,
                             m.n_kv_head != 0 ? m.n_kv_head : m.n_head,
                             m.d_model,
                             m.ffn_dim != 0 ? m.ffn_dim : nn::llama_default_ffn_dim(m.d_model),
                             m.vocab_size,
                             m.seq_len,
                             static_cast<float>(m.rope_theta),
                             static_cast<float>(m.norm_eps),
                             m.tie_embeddings,
                             static_cast<float>(m.dropout)};
  try {
    return nn::make_llama(shape);
  } catch (const ConfigError& e) {
    // The shape check names the keys; say where the key it names first was set.
    const std::string message = e.what();
    std::string key = "model.n_head";
    for (const char* candidate : {"model.n_kv_head", "model.ffn_dim", "model.rope_theta",
                                  "model.norm_eps", "model.d_model", "model.n_layer"}) {
      if (message.rfind(candidate, 0) == 0) key = candidate;
    }
    throw ConfigError(where_set(config, key) + ": " + message);
  }
}

// Llama's own keys shape nothing else: a value other than its default under another
// model.type would be ignored, so it is refused (a written config.toml holds every key, at
// its default, and loads again).
void refuse_llama_keys_elsewhere(const Config& config) {
  if (config.model.type == ModelType::kLlama) return;
  for (const char* name : {"n_kv_head", "ffn_dim", "rope_theta", "norm_eps"}) {
    const KeySpec* key = find_config_key("model", name);
    ZT_CHECK(key != nullptr, std::string("the schema has no model.") + name);
    const KeyValue value = key->read(config);
    if (value != key->default_value) {
      throw ConfigError(where_set(config, key->full_name()) + ": " + key->full_name() + " = " +
                        format_key_value(*key, value) +
                        " shapes model.type = \"llama\" only, "
                        "but model.type = \"" +
                        std::string(config_name(config.model.type)) +
                        "\"; remove it, or set model.type = \"llama\"");
    }
  }
}

}  // namespace

nn::Model make_model(const Config& config) {
  refuse_llama_keys_elsewhere(config);
  if (config.model.type == ModelType::kMlp && config.model.dropout != 0.0) {
    throw ConfigError(where_set(config, "model.dropout") +
                      ": model.dropout = " + std::to_string(config.model.dropout) +
                      " applies to model.type = \"gpt\" and \"llama\" only, but model.type = "
                      "\"mlp\"; remove it");
  }
  switch (config.model.type) {
    case ModelType::kMlp:
      return nn::make_mlp(
          {config.model.input_dim, config.model.hidden_dim, config.model.num_classes});
    case ModelType::kGpt:
      try {
        return nn::make_gpt({config.model.n_layer, config.model.n_head, config.model.d_model,
                             config.model.vocab_size, config.model.seq_len,
                             config.model.tie_embeddings,
                             static_cast<float>(config.model.dropout)});
      } catch (const ConfigError& e) {
        // The shape check names the keys; say where the head count was set.
        throw ConfigError(where_set(config, "model.n_head") + ": " + e.what());
      }
    case ModelType::kLlama:
      return make_llama_model(config);
  }
  throw InternalError("unknown model type");
}

void check_validation_keys(const Config& config) {
  const DataConfig& data = config.data;
  if (!data.val_path.empty() && data.val_fraction > 0) {
    throw ConfigError(where_set(config, "data.val_fraction") +
                      ": data.val_path and data.val_fraction both say where validation "
                      "windows come from; set one of them (data.val_path is set at " +
                      where_set(config, "data.val_path") + ")");
  }
  if (data.val_fraction > 0 && data.path.empty()) {
    throw ConfigError(
        where_set(config, "data.val_fraction") + ": data.val_fraction = " +
        format_key_value(*find_config_key("data", "val_fraction"), data.val_fraction) +
        " holds out part of data.path's token files, and data.path is empty (the "
        "synthetic data validates on a held-out stream of its own); set "
        "data.val_fraction = 0 or set data.path");
  }
  if (!data.val_path.empty() && !is_language_model(config.model.type)) {
    throw ConfigError(where_set(config, "data.val_path") +
                      ": data.val_path is set, but model.type = \"mlp\" trains and validates "
                      "on the built-in synthetic classification task; leave data.val_path "
                      "empty or use model.type = \"gpt\" or \"llama\"");
  }
  if (config.train.eval_every > 0 && !data.path.empty() && data.val_path.empty() &&
      data.val_fraction == 0) {
    throw ConfigError(where_set(config, "train.eval_every") +
                      ": train.eval_every = " + std::to_string(config.train.eval_every) +
                      " needs validation windows that training does not read: set "
                      "data.val_path to validation token files, or data.val_fraction to hold "
                      "out the last part of each data.path file");
  }
}

std::unique_ptr<data::BatchSource> make_validation_source(const Config& config) {
  check_validation_keys(config);
  const auto seed = static_cast<std::uint64_t>(config.run.seed);
  if (is_language_model(config.model.type) &&
      (!config.data.val_path.empty() || config.data.val_fraction > 0)) {
    std::vector<data::TokenShard> shards =
        config.data.val_path.empty() ? training_shards(config, true)
                                     : open_shards(config, config.data.val_path, "data.val_path");
    return data::make_token_corpus_source(std::move(shards),
                                          static_cast<std::uint32_t>(data_vocabulary(config.model)),
                                          config.model.seq_len, seed);
  }
  return data::make_shifted_source(make_batch_source(config), data::kHeldOutFirstSample);
}

std::unique_ptr<data::BatchSource> make_batch_source(const Config& config) {
  check_validation_keys(config);
  if (is_language_model(config.model.type)) return make_token_source(config);
  if (!config.data.path.empty()) {
    throw ConfigError(where_set(config, "data.path") + ": data.path = \"" + config.data.path +
                      "\": model.type = \"mlp\" trains on the built-in synthetic "
                      "classification task; leave data.path empty or use model.type = \"gpt\" "
                      "or \"llama\"");
  }
  return data::make_synthetic_classification_source(static_cast<std::uint64_t>(config.run.seed),
                                                    config.model.input_dim,
                                                    config.model.num_classes);
}

}  // namespace zt::engine
