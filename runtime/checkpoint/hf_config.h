// Note [Hugging Face config]: the config.json transformers saves beside a model's weights
// describes the model they were trained as. checkpoint.init_from reads the one beside the
// weights (the safetensors file's or the index's directory) and refuses a model.* that
// differs, naming the config.json key, the file, the model.* key and where it was set: the
// tensor shapes alone cannot tell a rope_theta, an epsilon or a rotary scaling apart, and
// these change every logit. Checked: GPT-2's n_embd, n_head, n_layer, n_positions (at least
// model.seq_len), layer_norm_epsilon and activation_function; Llama's hidden_size,
// num_attention_heads, num_key_value_heads, num_hidden_layers, intermediate_size, head_dim,
// rms_norm_eps and rope_theta (to 1e-6 relative), hidden_act, attention_bias and mlp_bias;
// any rope_scaling or a non-default rope_parameters.rope_type is refused (none is
// implemented); and both families' model_type and tie_word_embeddings (transformers' defaults
// when absent: GPT-2 tied, Llama untied). With the tie agreed, a copy of the tied head in the
// weights is skipped, as transformers ties it on load. A missing config.json is allowed (the
// shapes are still checked) and said in the log. An export (`checkpoint export --names hf`)
// writes one, so that transformers loads the export as it is.
//
// Note [Begin and end of text]: transformers reads bos_token_id and eos_token_id from
// config.json and, where one is absent, takes its config class's default: GPT2Config's 50256
// (GPT-2's <|endoftext|>), LlamaConfig's 1 and 2. A model trained with another tokenizer or a
// smaller vocabulary has no such token (transformers warns, and generation would stop on the
// wrong one), so the export writes both keys: data.tokenizer's begin- and end-of-text ids when
// it has them, null otherwise (no tokenizer: the ids are bytes, none of them special). The
// begin is the first of <|begin_of_text|> (Llama 3), <s> (Llama 2's style), <|endoftext|>
// (GPT-2, which begins and ends text with one token) the tokenizer holds; the end the first of
// <|end_of_text|>, </s>, <|endoftext|>.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/config/config.h"

namespace zt::data {
class BpeTokenizer;
}  // namespace zt::data

namespace zt::checkpoint {

inline constexpr std::string_view kHfConfigName = "config.json";

// The config.json in the directory of `weights_source` (a safetensors file or an index), or
// nullopt when there is none.
std::optional<std::filesystem::path> hf_config_beside(const std::filesystem::path& weights_source);

// The vocab_size of the config.json beside checkpoint.init_from's weights (in it, when
// `init_from` is a directory): the vocabulary the weights were trained on, which model.vocab_size
// may pad past (Note [Padded vocabulary] in nn/kernels/math/cross_entropy_math.h). nullopt when
// there is no such file or it has no vocab_size; FormatError when it is not JSON or the key is
// not an integer.
std::optional<std::int64_t> hf_config_vocab_size(const std::filesystem::path& init_from);

// Checks `config_json` against config.model (its family's keys, above). Throws ConfigError
// naming the config.json key and file and the model.* key, with both values; FormatError
// when the file is not JSON or a key has the wrong kind.
void check_hf_config(const Config& config, const std::filesystem::path& config_json);

// config.json's bos_token_id and eos_token_id; nullopt writes null (unknown).
struct HfSpecialTokens {
  std::optional<std::int64_t> bos;
  std::optional<std::int64_t> eos;
};

// `tokenizer`'s begin- and end-of-text ids (Note [Begin and end of text]).
HfSpecialTokens hf_special_tokens(const data::BpeTokenizer& tokenizer);

// A config.json for `model` that transformers builds the same model from: model_type,
// architectures, the shape keys above, `tokens`, and torch_dtype ("float32", "bfloat16").
std::string hf_config_text(const ModelConfig& model, std::string_view torch_dtype,
                           const HfSpecialTokens& tokens);

}  // namespace zt::checkpoint
