// Checking a Hugging Face config.json against model.* and writing one for an export
// (Note [Hugging Face config]).
#include "runtime/checkpoint/hf_config.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>

#include "core/config/config_enums.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "data/json_document.h"
#include "data/safe_file.h"
#include "nn/models/llama.h"
#include "runtime/engine/json_text.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

// Shortest text that reads back as `value` ("1e-05"), whole numbers in full ("500000").
std::string number_text(double value) {
  if (std::abs(value) < 1e15 && value == std::floor(value)) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  ZT_CHECK(ec == std::errc(), "a double always fits 32 characters");
  return std::string(buffer, end);
}

// What model.* says and where, for the checks of one config.json.
class ConfigJsonCheck {
 public:
  ConfigJsonCheck(const Config& config, const fs::path& path)
      : config_(config), path_(path), root_(data::read_json_file(path.string())) {
    root_.as_object("config.json");
  }

  // The key's value, nullptr when absent or null.
  const data::JsonValue* find(std::string_view key) const {
    const data::JsonValue* value = root_.find(key);
    return value == nullptr || value->is_null() ? nullptr : value;
  }

  void integer(std::string_view key, std::int64_t fallback, std::string_view ours,
               std::int64_t our_value) const {
    const data::JsonValue* value = find(key);
    const std::int64_t theirs = value == nullptr ? fallback : value->as_integer(key);
    if (theirs != our_value) differ(key, std::to_string(theirs), ours, std::to_string(our_value));
  }

  // Equal to 1e-6 relative: config.json holds what a float32 or a double printed.
  void real(std::string_view key, double fallback, std::string_view ours, double our_value) const {
    const data::JsonValue* value = find(key);
    const double theirs = value == nullptr ? fallback : value->as_number(key);
    if (!(std::abs(theirs - our_value) <= 1e-6 * std::abs(our_value))) {
      differ(key, number_text(theirs), ours, number_text(our_value));
    }
  }

  void boolean(std::string_view key, bool fallback, std::string_view ours, bool our_value) const {
    const data::JsonValue* value = find(key);
    const bool theirs = value == nullptr ? fallback : value->as_bool(key);
    const auto text = [](bool b) { return std::string(b ? "true" : "false"); };
    if (theirs != our_value) differ(key, text(theirs), ours, text(our_value));
  }

  // A boolean feature this project's Llama does not have (absent: transformers' default,
  // false): true is refused, saying what the weights would need.
  void absent_feature(std::string_view key, std::string_view feature) const {
    const data::JsonValue* value = find(key);
    if (value == nullptr || !value->as_bool(key)) return;
    refuse(std::string(key) + " = true, but this project's Llama has no " + std::string(feature) +
           "; load weights made without them");
  }

  // A string key this project implements one value of (absent: transformers' default).
  void only(std::string_view key, std::string_view supported, std::string_view meaning) const {
    const data::JsonValue* value = find(key);
    if (value == nullptr || value->as_string(key) == supported) return;
    refuse(std::string(key) + " = \"" + value->as_string(key) + "\", but this model " +
           std::string(meaning) + " (\"" + std::string(supported) + "\")");
  }

  [[noreturn]] void refuse(const std::string& what) const {
    throw ConfigError("Hugging Face config " + data::quoted_path(path_) + ": " + what);
  }

  [[noreturn]] void differ(std::string_view key, const std::string& theirs, std::string_view ours,
                           const std::string& our_value) const {
    refuse(std::string(key) + " = " + theirs + ", but " + std::string(ours) + " = " + our_value +
           " (" + where_set(config_, ours) + "): the weights were made for another model; set " +
           std::string(ours) + " to match, or load weights made for this one");
  }

 private:
  const Config& config_;
  fs::path path_;
  data::JsonValue root_;
};

// model.ffn_dim, Llama's default when 0.
std::int64_t ffn_dim_of(const ModelConfig& m) {
  return m.ffn_dim != 0 ? m.ffn_dim : nn::llama_default_ffn_dim(m.d_model);
}

void check_gpt2(const ConfigJsonCheck& json, const ModelConfig& m) {
  json.integer("n_embd", m.d_model, "model.d_model", m.d_model);
  json.integer("n_head", m.n_head, "model.n_head", m.n_head);
  json.integer("n_layer", m.n_layer, "model.n_layer", m.n_layer);
  if (const data::JsonValue* positions = json.find("n_positions")) {
    if (positions->as_integer("n_positions") < m.seq_len) {
      json.refuse("n_positions = " + std::to_string(positions->as_integer("n_positions")) +
                  ", fewer than model.seq_len = " + std::to_string(m.seq_len) +
                  ": the weights have no position embedding for the later positions");
    }
  }
  // GPT's LayerNorm epsilon is GPT-2's, fixed.
  if (const data::JsonValue* eps = json.find("layer_norm_epsilon")) {
    const double theirs = eps->as_number("layer_norm_epsilon");
    if (!(std::abs(theirs - 1e-5) <= 1e-11)) {
      json.refuse("layer_norm_epsilon = " + number_text(theirs) +
                  ", but this model's LayerNorm epsilon is GPT-2's 1e-05");
    }
  }
  json.only("activation_function", "gelu_new", "computes GELU's tanh approximation");
  json.boolean("tie_word_embeddings", true, "model.tie_embeddings", m.tie_embeddings);
}

void check_llama(const ConfigJsonCheck& json, const ModelConfig& m) {
  const std::int64_t n_kv_head = m.n_kv_head != 0 ? m.n_kv_head : m.n_head;
  json.integer("hidden_size", m.d_model, "model.d_model", m.d_model);
  json.integer("num_attention_heads", m.n_head, "model.n_head", m.n_head);
  // transformers' default: as many key/value heads as query heads.
  const data::JsonValue* heads = json.find("num_attention_heads");
  json.integer("num_key_value_heads",
               heads != nullptr ? heads->as_integer("num_attention_heads") : m.n_head,
               "model.n_kv_head", n_kv_head);
  json.integer("num_hidden_layers", m.n_layer, "model.n_layer", m.n_layer);
  json.integer("intermediate_size", ffn_dim_of(m), "model.ffn_dim", ffn_dim_of(m));
  if (const data::JsonValue* head_dim = json.find("head_dim")) {
    if (head_dim->as_integer("head_dim") != m.d_model / m.n_head) {
      json.refuse("head_dim = " + std::to_string(head_dim->as_integer("head_dim")) +
                  ", but model.d_model / model.n_head = " + std::to_string(m.d_model / m.n_head));
    }
  }
  json.real("rms_norm_eps", 1e-6, "model.norm_eps", m.norm_eps);
  // Newer transformers write rope_theta (and the rope type) inside rope_parameters.
  const data::JsonValue* rope = json.find("rope_parameters");
  if (rope != nullptr && rope->find("rope_theta") != nullptr) {
    const double theta = rope->find("rope_theta")->as_number("rope_parameters.rope_theta");
    if (!(std::abs(theta - m.rope_theta) <= 1e-6 * std::abs(m.rope_theta))) {
      json.differ("rope_parameters.rope_theta", number_text(theta), "model.rope_theta",
                  number_text(m.rope_theta));
    }
  } else {
    json.real("rope_theta", 10000.0, "model.rope_theta", m.rope_theta);
  }
  if (json.find("rope_scaling") != nullptr) {
    json.refuse(
        "rope_scaling is set, but this project implements no rotary scaling (linear, dynamic, "
        "yarn, llama3): its positions would turn by other angles than the weights learned");
  }
  if (rope != nullptr) {
    const data::JsonValue* type = rope->find("rope_type");
    if (type != nullptr && !type->is_null() &&
        type->as_string("rope_parameters.rope_type") != "default") {
      json.refuse("rope_parameters.rope_type = \"" + type->as_string("rope_parameters.rope_type") +
                  "\", but this project implements only the default rotary embedding");
    }
  }
  json.only("hidden_act", "silu", "computes SwiGLU with SiLU");
  json.absent_feature("attention_bias", "biases in the attention's q/k/v/o projections");
  json.absent_feature("mlp_bias", "biases in the MLP's gate/up/down projections");
  json.boolean("tie_word_embeddings", false, "model.tie_embeddings", m.tie_embeddings);
}

}  // namespace

std::optional<fs::path> hf_config_beside(const fs::path& weights_source) {
  const fs::path path = weights_source.parent_path() / kHfConfigName;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  return std::nullopt;
}

std::optional<std::int64_t> hf_config_vocab_size(const fs::path& init_from) {
  std::error_code ec;
  const fs::path path = fs::is_directory(init_from, ec) ? init_from / kHfConfigName
                                                        : init_from.parent_path() / kHfConfigName;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const data::JsonValue root = data::read_json_file(path.string());
  root.as_object("config.json");
  const data::JsonValue* vocab = root.find("vocab_size");
  if (vocab == nullptr || vocab->is_null()) return std::nullopt;
  return vocab->as_integer("vocab_size");
}

void check_hf_config(const Config& config, const fs::path& config_json) {
  const ConfigJsonCheck json(config, config_json);
  const ModelConfig& m = config.model;
  const std::string family = m.type == ModelType::kLlama ? "llama" : "gpt2";
  if (const data::JsonValue* type = json.find("model_type")) {
    if (type->as_string("model_type") != family) {
      json.refuse("model_type = \"" + type->as_string("model_type") + "\", but model.type = \"" +
                  std::string(config_name(m.type)) + "\" loads Hugging Face's \"" + family +
                  "\" weights");
    }
  }
  if (m.type == ModelType::kLlama) {
    check_llama(json, m);
  } else {
    check_gpt2(json, m);
  }
}

HfSpecialTokens hf_special_tokens(const data::BpeTokenizer& tokenizer) {
  const auto first_of = [&](std::initializer_list<std::string_view> texts) {
    for (const std::string_view text : texts) {
      if (const auto id = tokenizer.token_id(text)) return std::optional<std::int64_t>(*id);
    }
    return std::optional<std::int64_t>();
  };
  return {first_of({"<|begin_of_text|>", "<s>", "<|endoftext|>"}),
          first_of({"<|end_of_text|>", "</s>", "<|endoftext|>"})};
}

std::string hf_config_text(const ModelConfig& m, std::string_view torch_dtype,
                           const HfSpecialTokens& tokens) {
  std::vector<std::pair<std::string, std::string>> keys;
  const auto integer = [&](const char* key, std::int64_t value) {
    keys.emplace_back(key, std::to_string(value));
  };
  const auto text = [&](const char* key, std::string_view value) {
    keys.emplace_back(key, engine::json_string(value));
  };
  const auto boolean = [&](const char* key, bool value) {
    keys.emplace_back(key, value ? "true" : "false");
  };
  if (m.type == ModelType::kLlama) {
    const std::int64_t n_kv_head = m.n_kv_head != 0 ? m.n_kv_head : m.n_head;
    keys.emplace_back("architectures", "[\"LlamaForCausalLM\"]");
    text("model_type", "llama");
    integer("vocab_size", m.vocab_size);
    integer("hidden_size", m.d_model);
    integer("intermediate_size", ffn_dim_of(m));
    integer("num_hidden_layers", m.n_layer);
    integer("num_attention_heads", m.n_head);
    integer("num_key_value_heads", n_kv_head);
    integer("head_dim", m.d_model / m.n_head);
    text("hidden_act", "silu");
    integer("max_position_embeddings", m.seq_len);
    keys.emplace_back("rms_norm_eps", number_text(m.norm_eps));
    keys.emplace_back("rope_theta", number_text(m.rope_theta));
    keys.emplace_back("rope_scaling", "null");
    boolean("attention_bias", false);
    boolean("mlp_bias", false);
  } else {
    keys.emplace_back("architectures", "[\"GPT2LMHeadModel\"]");
    text("model_type", "gpt2");
    integer("vocab_size", m.vocab_size);
    integer("n_embd", m.d_model);
    integer("n_head", m.n_head);
    integer("n_layer", m.n_layer);
    integer("n_positions", m.seq_len);
    integer("n_ctx", m.seq_len);
    text("activation_function", "gelu_new");
    keys.emplace_back("layer_norm_epsilon", "1e-05");
  }
  // Always written: an absent key would be transformers' default (Note [Begin and end of text]).
  const auto id = [&](const char* key, std::optional<std::int64_t> value) {
    keys.emplace_back(key, value ? std::to_string(*value) : "null");
  };
  id("bos_token_id", tokens.bos);
  id("eos_token_id", tokens.eos);
  boolean("tie_word_embeddings", m.tie_embeddings);
  text("torch_dtype", torch_dtype);
  std::string json = "{\n";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    json += "  " + engine::json_string(keys[i].first) + ": " + keys[i].second +
            (i + 1 < keys.size() ? ",\n" : "\n");
  }
  return json + "}\n";
}

}  // namespace zt::checkpoint
