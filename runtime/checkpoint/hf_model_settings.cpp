// config.json's keys read back into model.* (the reverse of hf_config_text).
#include "runtime/checkpoint/hf_model_settings.h"

#include <algorithm>
#include <system_error>

#include "core/error.h"
#include "data/json_document.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/engine/json_text.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

class ConfigJson {
 public:
  explicit ConfigJson(const fs::path& path)
      : path_(path), root_(data::read_json_file(path.string())) {
    root_.as_object("config.json");
  }

  const data::JsonValue* find(std::string_view key) const {
    const data::JsonValue* value = root_.find(key);
    return value == nullptr || value->is_null() ? nullptr : value;
  }
  std::int64_t required_integer(std::string_view key) const {
    const data::JsonValue* value = find(key);
    if (value == nullptr) {
      throw ConfigError("Hugging Face config " + data::quoted_path(path_) + " has no " +
                        std::string(key) + ", which the model's shape needs");
    }
    return value->as_integer(key);
  }
  std::int64_t integer(std::string_view key, std::int64_t fallback) const {
    const data::JsonValue* value = find(key);
    return value == nullptr ? fallback : value->as_integer(key);
  }
  double number(std::string_view key, double fallback) const {
    const data::JsonValue* value = find(key);
    return value == nullptr ? fallback : value->as_number(key);
  }
  bool boolean(std::string_view key, bool fallback) const {
    const data::JsonValue* value = find(key);
    return value == nullptr ? fallback : value->as_bool(key);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  data::JsonValue root_;
};

std::string setting(const char* key, std::int64_t value) {
  return std::string(key) + "=" + std::to_string(value);
}

}  // namespace

bool is_hf_folder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec) || !fs::is_regular_file(path / kHfConfigName, ec)) return false;
  if (fs::exists(path / kManifestName, ec)) return false;
  return fs::is_regular_file(path / "model.safetensors", ec) ||
         fs::is_regular_file(path / "model.safetensors.index.json", ec);
}

std::vector<std::string> hf_model_settings(const fs::path& config_json) {
  const ConfigJson json(config_json);
  const data::JsonValue* type = json.find("model_type");
  const std::string model_type = type != nullptr ? type->as_string("model_type") : "";
  std::vector<std::string> settings;
  std::int64_t positions = 0;
  if (model_type == "gpt2") {
    settings = {"model.type=gpt", setting("model.d_model", json.required_integer("n_embd")),
                setting("model.n_head", json.required_integer("n_head")),
                setting("model.n_layer", json.required_integer("n_layer"))};
    positions = json.integer("n_positions", kDefaultHfSeqLen);
    settings.push_back(std::string("model.tie_embeddings=") +
                       (json.boolean("tie_word_embeddings", true) ? "true" : "false"));
  } else if (model_type == "llama") {
    const std::int64_t heads = json.required_integer("num_attention_heads");
    settings = {"model.type=llama",
                setting("model.d_model", json.required_integer("hidden_size")),
                setting("model.n_head", heads),
                setting("model.n_kv_head", json.integer("num_key_value_heads", heads)),
                setting("model.n_layer", json.required_integer("num_hidden_layers")),
                setting("model.ffn_dim", json.required_integer("intermediate_size")),
                "model.norm_eps=" + engine::number_text(json.number("rms_norm_eps", 1e-6))};
    double theta = json.number("rope_theta", 10000.0);
    if (const data::JsonValue* rope = json.find("rope_parameters")) {
      if (const data::JsonValue* nested = rope->find("rope_theta")) {
        theta = nested->as_number("rope_parameters.rope_theta");
      }
    }
    settings.push_back("model.rope_theta=" + engine::number_text(theta));
    positions = json.integer("max_position_embeddings", kDefaultHfSeqLen);
    settings.push_back(std::string("model.tie_embeddings=") +
                       (json.boolean("tie_word_embeddings", false) ? "true" : "false"));
  } else {
    throw ConfigError("Hugging Face config " + data::quoted_path(config_json) + ": model_type " +
                      (type != nullptr ? "\"" + model_type + "\"" : std::string("is absent")) +
                      ", but only \"gpt2\" and \"llama\" weights load here");
  }
  settings.push_back(setting("model.vocab_size", json.required_integer("vocab_size")));
  settings.push_back(setting("model.seq_len", std::min(positions, kDefaultHfSeqLen)));
  return settings;
}

}  // namespace zt::checkpoint
