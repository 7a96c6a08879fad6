// `zerotrain generate [CONFIG] --checkpoint PATH (--prompt TEXT... | --prompts-file FILE)
// --max-new-tokens N [--temperature T] [--top-k K] [--seed S] [--set section.key=value]...`:
// text from a trained GPT or Llama, alone or as every rank of `zerotrain launch ... --
// zerotrain generate ...`: each prompt encoded (data.tokenizer, or ids), the batch decoded with
// the model as the ranks shard it (zerotrain::Engine::generate), and each prompt with its new
// tokens printed by rank 0, decoded.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "apps/generate_prompts.h"
#include "apps/weights_source.h"
#include "core/config/config_enums.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "runtime/engine/data_vocabulary.h"
#include "zerotrain/engine.h"

namespace zt::apps {
namespace {

struct GenerateArgs {
  WeightsArgs weights;
  std::vector<std::string> prompts;  // each --prompt, in order
  std::string prompts_file;          // --prompts-file; "" when not given
  std::optional<std::int64_t> max_new_tokens;
  zerotrain::SamplingOptions sampling;
};

template <typename Number>
Number parse_number(const std::string& flag, const std::string& text, const char* expected) {
  Number value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    throw UsageError(flag + ": expected " + expected + ", got '" + text + "'");
  }
  return value;
}

GenerateArgs parse_generate_args(const Args& args) {
  GenerateArgs parsed;
  Args rest;
  parsed.weights = parse_weights_args(
      args,
      {"--prompt", "--prompts-file", "--max-new-tokens", "--temperature", "--top-k", "--seed"},
      rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    if (arg == "--prompt") {
      parsed.prompts.push_back(rest[++i]);
    } else if (arg == "--prompts-file") {
      parsed.prompts_file = rest[++i];
      if (parsed.prompts_file.empty()) throw UsageError("--prompts-file needs a FILE");
    } else if (arg == "--max-new-tokens") {
      parsed.max_new_tokens = parse_number<std::int64_t>(arg, rest[++i], "an integer >= 1");
      if (*parsed.max_new_tokens < 1) {
        throw UsageError("--max-new-tokens: expected an integer >= 1, got " +
                         std::to_string(*parsed.max_new_tokens));
      }
    } else if (arg == "--temperature") {
      const std::string& text = rest[++i];
      parsed.sampling.temperature = parse_number<double>(arg, text, "a number >= 0");
      if (!(parsed.sampling.temperature >= 0) || !std::isfinite(parsed.sampling.temperature)) {
        throw UsageError("--temperature: expected a number >= 0 (0: greedy), got " + text);
      }
    } else if (arg == "--top-k") {
      const std::string& text = rest[++i];
      parsed.sampling.top_k = parse_number<std::int64_t>(arg, text, "an integer >= 0");
      if (parsed.sampling.top_k < 0) {
        throw UsageError("--top-k: expected an integer >= 0 (0: every token), got " + text);
      }
    } else if (arg == "--seed") {
      parsed.sampling.seed = parse_number<std::uint64_t>(arg, rest[++i], "an integer >= 0");
    } else {
      throw UsageError("generate: unknown option '" + arg + "'");
    }
  }
  if (parsed.prompts.empty() && parsed.prompts_file.empty()) {
    throw UsageError("generate needs --prompt TEXT (once per prompt) or --prompts-file FILE");
  }
  if (!parsed.max_new_tokens) throw UsageError("generate needs --max-new-tokens N");
  return parsed;
}

std::optional<data::BpeTokenizer> load_tokenizer(const Config& config) {
  if (config.data.tokenizer.empty()) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(config.data.tokenizer, ec)) {
    throw ConfigError(where_set(config, "data.tokenizer") + ": no tokenizer file '" +
                      config.data.tokenizer + "'");
  }
  return data::BpeTokenizer::load(config.data.tokenizer);
}

// The settings that make a training config a generation: an inference run with no validation
// source (no data is read: Engine's load_data is off).
std::vector<std::string> generate_settings(const Config& config, const WeightsArgs& weights) {
  std::vector<std::string> settings = inference_settings(config, weights, "generate");
  settings.push_back("train.eval_every=0");
  return settings;
}

std::string ids_text(const std::vector<std::int32_t>& ids) {
  std::string text;
  for (const std::int32_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

}  // namespace

int generate_command(const Args& args) {
  const GenerateArgs parsed = parse_generate_args(args);
  const std::vector<Prompt> prompts = read_prompts(parsed.prompts, parsed.prompts_file);
  Config config = weights_config(parsed.weights, [&](const Config& given) {
    return generate_settings(given, parsed.weights);
  });
  if (!is_language_model(config.model.type)) {
    throw ConfigError(where_set(config, "model.type") +
                      ": generate needs a language model (gpt or llama), got " +
                      std::string(config_name(config.model.type)));
  }
  std::optional<data::BpeTokenizer> tokenizer = load_tokenizer(config);
  if (tokenizer && tokenizer->vocab_size() > config.model.vocab_size) {
    throw ConfigError(where_set(config, "model.vocab_size") + ": " +
                      std::to_string(config.model.vocab_size) +
                      " is smaller than data.tokenizer '" + config.data.tokenizer +
                      "''s vocabulary of " + std::to_string(tokenizer->vocab_size()));
  }
  // The ids a prompt may hold and the sampler may draw: never a padded row (Note [Padded
  // vocabulary]). Resolved here once, with the tokenizer already loaded.
  config.model.data_vocab_size = engine::data_vocab_size(config, tokenizer ? &*tokenizer : nullptr);
  std::vector<std::vector<std::int32_t>> prompt_tokens;
  for (const Prompt& prompt : prompts) {
    prompt_tokens.push_back(
        prompt_ids(prompt, tokenizer ? &*tokenizer : nullptr, config.model.data_vocab_size));
    const auto prompt_len = static_cast<std::int64_t>(prompt_tokens.back().size());
    if (prompt_len + *parsed.max_new_tokens > config.model.seq_len) {
      throw UsageError(
          prompt.name + " (" + std::to_string(prompt_len) + " tokens) + --max-new-tokens " +
          std::to_string(*parsed.max_new_tokens) + " = " +
          std::to_string(prompt_len + *parsed.max_new_tokens) +
          " positions, more than model.seq_len = " + std::to_string(config.model.seq_len));
    }
  }

  zerotrain::EngineOptions options = inference_engine_options(config);
  options.load_data = false;  // the weights alone: no corpus is opened
  zerotrain::Engine engine(config, options);
  const std::vector<std::vector<std::int32_t>> continuations =
      engine.generate(prompt_tokens, *parsed.max_new_tokens, parsed.sampling);
  engine.finish();
  if (engine.rank() != 0) return 0;
  // One block per prompt, in order: the prompt and its new tokens, then a newline; a blank
  // line between blocks.
  for (std::size_t b = 0; b < prompt_tokens.size(); ++b) {
    std::vector<std::int32_t> text = prompt_tokens[b];
    text.insert(text.end(), continuations[b].begin(), continuations[b].end());
    const std::string out =
        (b == 0 ? "" : "\n") + (tokenizer ? tokenizer->decode(text) : ids_text(text));
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace zt::apps
