// Note [Hugging Face names]: how a model family's parameters are called in Hugging Face's
// safetensors files, and how their layout differs from ours. A family is a table of rules,
// one per kind of parameter, "{N}" standing for a block's index:
//
//   project "block.{N}.attn.qkv.weight" <- "h.{N}.attn.c_attn.weight", transposed
//
// A rule lists one Hugging Face tensor per part: parts stack along the parameter's rows in
// order (Llama's q, k and v projections make our fused qkv; GPT-2 has one part each).
// Conv1D weights (GPT-2) are stored (in, out) and transposed to our Linear's (out, in).
// Row fit: the token embedding (and an untied head) may have fewer rows than the model's
// padded vocabulary, the rest zero; the position embedding may have more rows than
// model.seq_len, of which the first are used. Tensors a family never loads (GPT-2's causal
// mask buffers) are listed as skipped. A family's body tensors may carry a prefix
// ("transformer." when saved from GPT2LMHeadModel): accepted when reading, written when
// exporting. Adding a family is adding a table (hf_names.cpp).
#pragma once

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
  HfLayout layout = HfLayout::kAsIs;
  HfRowFit row_fit = HfRowFit::kExact;
  bool in_body = true;  // the family's body prefix applies (not to GPT-2's lm_head)
};

struct HfNaming {
  std::string family;       // "gpt2"
  std::string body_prefix;  // "transformer."
  // Our untied parameters, in layout order (a tied one reads its source's values).
  std::vector<HfParameterNames> parameters;
  std::vector<std::string> skipped_patterns;  // buffers never loaded, "{N}" a block index
  // Whether a Hugging Face name (without the body prefix) is a buffer this family skips.
  bool skipped(std::string_view name) const;
};

// The naming of `model_type`'s parameters (describe_parameters' list). Throws ConfigError
// for a model type without Hugging Face names (mlp), and InternalError for a parameter the
// family's table does not cover (a model changed without its table).
HfNaming hf_naming(ModelType model_type, std::span<const ManifestParameter> parameters);

// `name` without the body prefix when it has it.
std::string_view without_body_prefix(const HfNaming& naming, std::string_view name);

}  // namespace zt::checkpoint
