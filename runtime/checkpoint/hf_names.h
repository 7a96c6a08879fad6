// Note [Hugging Face names]: how a model family's parameters are called in Hugging Face's
// safetensors files, and how their layout differs from ours. A family is a table of rules,
// one per kind of parameter, "{N}" standing for a block's index:
//
//   project "block.{N}.attn.qkv.weight" <- "h.{N}.attn.c_attn.weight", transposed
//
// A rule lists one Hugging Face tensor per part: parts stack along the parameter's rows in
// order, each of a row count the model's shape fixes (Llama's q_proj (n_head head_dim rows),
// k_proj and v_proj (n_kv_head head_dim each) make our fused qkv; gate_proj then up_proj, F
// rows each, our fused SwiGLU fc); an export splits the rows back. GPT-2 has one part each.
// Llama's q and k rows need no permutation: our rotary embedding pairs (x_i, x_{i+hd/2}) as
// Hugging Face's rotate_half does (Note [Rotary pairs] in nn/kernels/kernel_backend.h);
// Hugging Face's conversion already permuted Meta's interleaved rows into that order.
// Conv1D weights (GPT-2) are stored (in, out) and transposed to our Linear's (out, in).
// Row fit: the token embedding (and an untied head) may have fewer rows than the model's
// padded vocabulary, the rest zero; the position embedding may have more rows than
// model.seq_len, of which the first are used. Tensors a family never loads (GPT-2's causal
// mask buffers, Llama's rotary_emb.inv_freq) are listed as skipped. A family's body tensors may
// carry a prefix
// ("transformer." when saved from GPT2LMHeadModel, "model." from LlamaForCausalLM; lm_head
// has none): accepted when reading, written when exporting. A tied head is absent from the
// files transformers saves; one present beside a config.json that declares the tie is
// skipped, as transformers ties it to the embedding on load (Note [Hugging Face config]).
// Adding a family is adding a table (hf_names.cpp).
//
// Our own names (`checkpoint export` without --names hf) are one more naming, of no family:
// every untied parameter under its manifest name ("embedding.wte", "block.{N}.attn.qkv.weight"),
// in our layout with our rows, a tied one written once under its source's name. No Hugging
// Face name is one of ours, so init_from tells the two apart by the tensors present
// (Note [Which names init_from reads] in hf_import.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "runtime/checkpoint/checkpoint_format.h"

namespace zt::checkpoint {

enum class HfLayout {
  kAsIs,        // the same row-major layout as ours
  kTransposed,  // Conv1D: (in, out), ours is (out, in)
};

enum class HfRowFit {
  kExact,
  kPadWithZeros,  // fewer rows than ours: the rest are zero (a padded vocabulary)
  kFirstRows,     // at least as many rows as ours: the first are ours (positions)
};

// One of our parameters and where its values come from.
struct HfParameterNames {
  ManifestParameter parameter;
  std::vector<std::string> parts;  // Hugging Face names (no body prefix), stacked by rows
  // Each part's rows when there are several (they add up to the parameter's), else empty.
  std::vector<std::int64_t> part_rows;
  HfLayout layout = HfLayout::kAsIs;
  HfRowFit row_fit = HfRowFit::kExact;
  bool in_body = true;  // the family's body prefix applies (not to GPT-2's lm_head)
};

// The family of our own names (zerotrain_naming).
inline constexpr std::string_view kZerotrainNames = "zerotrain";

struct HfNaming {
  std::string family;       // "gpt2", "llama": config.json's model_type; or kZerotrainNames
  std::string body_prefix;  // "transformer.", "model."
  // Our untied parameters, in layout order (a tied one reads its source's values).
  std::vector<HfParameterNames> parameters;
  std::vector<std::string> skipped_patterns;  // buffers never loaded, "{N}" a block index
  // Whether a Hugging Face name (without the body prefix) is a buffer this family skips.
  bool skipped(std::string_view name) const;
};

// The naming of `model`'s parameters (describe_parameters' list); model.* gives the rows of
// a fused parameter's parts. Throws ConfigError for a model type without Hugging Face names
// (mlp), and InternalError for a parameter the family's table does not cover (a model
// changed without its table).
HfNaming hf_naming(const ModelConfig& model, std::span<const ManifestParameter> parameters);

// Our own names for `parameters`: each untied one under its name, as it is (family
// "zerotrain", no body prefix, rows exact). Any model type has them, mlp included.
HfNaming zerotrain_naming(std::span<const ManifestParameter> parameters);

// `name` without the body prefix when it has it.
std::string_view without_body_prefix(const HfNaming& naming, std::string_view name);

}  // namespace zt::checkpoint
