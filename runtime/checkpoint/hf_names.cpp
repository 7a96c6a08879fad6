// The name tables of Note [Hugging Face names], one per model family, and their matching.
#include "runtime/checkpoint/hf_names.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/config/config_enums.h"
#include "core/error.h"

namespace zt::checkpoint {
namespace {

// How a fused parameter's rows divide among its parts.
enum class HfSplit {
  kWhole,      // one part
  kQkv,        // q: n_head head_dim rows, k and v: n_kv_head head_dim rows each
  kTwoHalves,  // gate then up: half the rows each
};

struct HfRule {
  std::string_view project;              // our name, "{N}" for the block index
  std::array<std::string_view, 3> hf{};  // the parts, unused ones empty
  HfLayout layout = HfLayout::kAsIs;
  HfRowFit row_fit = HfRowFit::kExact;
  bool in_body = true;
  HfSplit split = HfSplit::kWhole;
};

struct HfFamily {
  std::string_view name;
  std::string_view body_prefix;
  std::span<const HfRule> rules;
  std::span<const std::string_view> skipped;  // "{N}" for the block index
};

constexpr HfLayout kT = HfLayout::kTransposed;
constexpr HfLayout kSame = HfLayout::kAsIs;

// GPT-2 (transformers' GPT2Model / GPT2LMHeadModel).
constexpr std::array<HfRule, 17> kGpt2Rules{{
    {"embedding.wte", {"wte.weight"}, kSame, HfRowFit::kPadWithZeros},
    {"embedding.wpe", {"wpe.weight"}, kSame, HfRowFit::kFirstRows},
    {"block.{N}.ln_1.weight", {"h.{N}.ln_1.weight"}},
    {"block.{N}.ln_1.bias", {"h.{N}.ln_1.bias"}},
    {"block.{N}.attn.qkv.weight", {"h.{N}.attn.c_attn.weight"}, kT},
    {"block.{N}.attn.qkv.bias", {"h.{N}.attn.c_attn.bias"}},
    {"block.{N}.attn.proj.weight", {"h.{N}.attn.c_proj.weight"}, kT},
    {"block.{N}.attn.proj.bias", {"h.{N}.attn.c_proj.bias"}},
    {"block.{N}.ln_2.weight", {"h.{N}.ln_2.weight"}},
    {"block.{N}.ln_2.bias", {"h.{N}.ln_2.bias"}},
    {"block.{N}.mlp.fc.weight", {"h.{N}.mlp.c_fc.weight"}, kT},
    {"block.{N}.mlp.fc.bias", {"h.{N}.mlp.c_fc.bias"}},
    {"block.{N}.mlp.proj.weight", {"h.{N}.mlp.c_proj.weight"}, kT},
    {"block.{N}.mlp.proj.bias", {"h.{N}.mlp.c_proj.bias"}},
    {"head.ln_f.weight", {"ln_f.weight"}},
    {"head.ln_f.bias", {"ln_f.bias"}},
    {"head.lm_head.weight", {"lm_head.weight"}, kSame, HfRowFit::kPadWithZeros, false},
}};
// The causal mask GPT-2 keeps as buffers (older files have them; they are not weights).
constexpr std::array<std::string_view, 2> kGpt2Skipped{"h.{N}.attn.bias", "h.{N}.attn.masked_bias"};

constexpr HfFamily kGpt2{"gpt2", "transformer.", kGpt2Rules, kGpt2Skipped};

// Llama (transformers' LlamaModel / LlamaForCausalLM): q/k/v stack into our fused qkv and
// gate/up into our SwiGLU fc, their rows as they are (Note [Hugging Face names]).
constexpr std::array<HfRule, 9> kLlamaRules{{
    {"embedding.wte", {"embed_tokens.weight"}, kSame, HfRowFit::kPadWithZeros},
    {"block.{N}.rms_1.weight", {"layers.{N}.input_layernorm.weight"}},
    {"block.{N}.attn.qkv.weight",
     {"layers.{N}.self_attn.q_proj.weight", "layers.{N}.self_attn.k_proj.weight",
      "layers.{N}.self_attn.v_proj.weight"},
     kSame,
     HfRowFit::kExact,
     true,
     HfSplit::kQkv},
    {"block.{N}.attn.proj.weight", {"layers.{N}.self_attn.o_proj.weight"}},
    {"block.{N}.rms_2.weight", {"layers.{N}.post_attention_layernorm.weight"}},
    {"block.{N}.mlp.fc.weight",
     {"layers.{N}.mlp.gate_proj.weight", "layers.{N}.mlp.up_proj.weight"},
     kSame,
     HfRowFit::kExact,
     true,
     HfSplit::kTwoHalves},
    {"block.{N}.mlp.proj.weight", {"layers.{N}.mlp.down_proj.weight"}},
    {"head.rms_f.weight", {"norm.weight"}},
    {"head.lm_head.weight", {"lm_head.weight"}, kSame, HfRowFit::kPadWithZeros, false},
}};
// The rotary inverse frequencies older transformers saved as buffers (computed, not weights).
constexpr std::array<std::string_view, 1> kLlamaSkipped{"layers.{N}.self_attn.rotary_emb.inv_freq"};

constexpr HfFamily kLlama{"llama", "model.", kLlamaRules, kLlamaSkipped};

const HfFamily& family_of(ModelType type) {
  switch (type) {
    case ModelType::kGpt:
      return kGpt2;
    case ModelType::kLlama:
      return kLlama;
    case ModelType::kMlp:
      break;
  }
  throw ConfigError("checkpoint.init_from: model.type = \"" + std::string(config_name(type)) +
                    "\" has no Hugging Face counterpart; Hugging Face weights load into "
                    "model.type = \"gpt\" (GPT-2) and \"llama\" (a `zerotrain checkpoint "
                    "export` under its own names loads into any model.type)");
}

// The block index `name` has where `pattern` has "{N}"; nullopt when it does not match.
// A pattern without "{N}" matches only itself (index -1).
std::optional<long long> match(std::string_view pattern, std::string_view name) {
  const std::size_t hole = pattern.find("{N}");
  if (hole == std::string_view::npos) {
    return pattern == name ? std::optional<long long>(-1) : std::nullopt;
  }
  const std::string_view before = pattern.substr(0, hole);
  const std::string_view after = pattern.substr(hole + 3);
  if (name.size() <= before.size() + after.size() || name.substr(0, before.size()) != before ||
      name.substr(name.size() - after.size()) != after) {
    return std::nullopt;
  }
  const std::string_view digits =
      name.substr(before.size(), name.size() - before.size() - after.size());
  if (digits.size() > 9) return std::nullopt;
  long long index = 0;
  for (const char c : digits) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
    index = index * 10 + (c - '0');
  }
  return index;
}

// The rows of each part of a parameter of `rows` rows split as `split` says.
std::vector<std::int64_t> part_rows(HfSplit split, const ModelConfig& model, std::int64_t rows) {
  switch (split) {
    case HfSplit::kWhole:
      return {};
    case HfSplit::kQkv: {
      const std::int64_t head_dim = model.d_model / std::max<std::int64_t>(model.n_head, 1);
      const std::int64_t kv_rows =
          (model.n_kv_head != 0 ? model.n_kv_head : model.n_head) * head_dim;
      return {rows - 2 * kv_rows, kv_rows, kv_rows};
    }
    case HfSplit::kTwoHalves:
      return {rows / 2, rows - rows / 2};
  }
  return {};
}

std::string substitute(std::string_view pattern, long long index) {
  std::string text(pattern);
  const std::size_t hole = text.find("{N}");
  if (hole != std::string::npos) text.replace(hole, 3, std::to_string(index));
  return text;
}

}  // namespace

bool HfNaming::skipped(std::string_view name) const {
  for (const std::string& pattern : skipped_patterns) {
    if (match(pattern, name)) return true;
  }
  return false;
}

HfNaming hf_naming(const ModelConfig& model, std::span<const ManifestParameter> parameters) {
  const HfFamily& family = family_of(model.type);
  HfNaming naming;
  naming.family = std::string(family.name);
  naming.body_prefix = std::string(family.body_prefix);
  naming.skipped_patterns.assign(family.skipped.begin(), family.skipped.end());
  for (const ManifestParameter& parameter : parameters) {
    if (!parameter.tied_to.empty()) continue;
    const HfRule* found = nullptr;
    long long index = -1;
    for (const HfRule& rule : family.rules) {
      if (const auto block = match(rule.project, parameter.name)) {
        found = &rule;
        index = *block;
        break;
      }
    }
    ZT_CHECK(found != nullptr, "the " + naming.family + " name table has no rule for parameter '" +
                                   parameter.name + "'");
    HfParameterNames names{parameter, {}, {}, found->layout, found->row_fit, found->in_body};
    for (const std::string_view part : found->hf) {
      if (!part.empty()) names.parts.push_back(substitute(part, index));
    }
    if (!parameter.shape.empty()) {
      names.part_rows = part_rows(found->split, model, parameter.shape[0]);
    }
    ZT_CHECK(names.part_rows.empty() || names.part_rows.size() == names.parts.size(),
             "the " + naming.family + " rule for '" + parameter.name + "' splits its rows into " +
                 std::to_string(names.part_rows.size()) + " parts, not " +
                 std::to_string(names.parts.size()));
    naming.parameters.push_back(std::move(names));
  }
  return naming;
}

HfNaming zerotrain_naming(std::span<const ManifestParameter> parameters) {
  HfNaming naming;
  naming.family = std::string(kZerotrainNames);
  for (const ManifestParameter& parameter : parameters) {
    if (!parameter.tied_to.empty()) continue;
    naming.parameters.push_back(
        {parameter, {parameter.name}, {}, HfLayout::kAsIs, HfRowFit::kExact, true});
  }
  return naming;
}

std::string_view without_body_prefix(const HfNaming& naming, std::string_view name) {
  if (!naming.body_prefix.empty() &&
      name.substr(0, naming.body_prefix.size()) == naming.body_prefix)
    return name.substr(naming.body_prefix.size());
  return name;
}

}  // namespace zt::checkpoint
