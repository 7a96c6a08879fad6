// The model.* settings a Hugging Face folder describes: what `eval` and `generate` run on when
// given a folder of transformers' weights and no training config.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zt::checkpoint {

// A sequence length for weights whose context is longer: a KV cache or an evaluation window
// of a 128k-position Llama would need gigabytes before the first token; `--set
// model.seq_len=N` asks for more.
inline constexpr std::int64_t kDefaultHfSeqLen = 1024;

// Whether `path` is a directory of Hugging Face weights: it holds config.json and
// model.safetensors or model.safetensors.index.json (and no checkpoint manifest).
bool is_hf_folder(const std::filesystem::path& path);

// "section.key=value" settings (as --set takes them) for the model `config_json` describes:
// model.type (gpt from model_type "gpt2", llama from "llama"), its shape keys, vocab_size,
// tie_embeddings (transformers' defaults when absent), Llama's rope_theta and norm_eps, and
// model.seq_len = the weights' positions, at most kDefaultHfSeqLen. check_hf_config accepts
// the model these settings make. Throws ConfigError naming the file for another model_type or
// a missing shape key; FormatError when the file is not JSON.
std::vector<std::string> hf_model_settings(const std::filesystem::path& config_json);

}  // namespace zt::checkpoint
