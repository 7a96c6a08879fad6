// `zerotrain generate CONFIG --checkpoint PATH --prompt TEXT --max-new-tokens N
// [--temperature T] [--top-k K] [--seed S] [--set section.key=value]...`: text from a trained
// GPT or Llama: the prompt encoded (data.tokenizer, or ids), fed once through the KV cache, then N
// tokens sampled one at a time and printed, decoded.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "core/config/config_enums.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "data/bpe_tokenizer.h"
#include "runtime/engine/data_vocabulary.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/model_factory.h"
#include "runtime/generate/decoder.h"
#include "runtime/generate/token_sampler.h"
#include "sharding/compute_dtype.h"

namespace zt::apps {
namespace {

struct GenerateArgs {
  ConfigArgs config;
  std::string checkpoint;
  std::optional<std::string> prompt;
  std::optional<std::int64_t> max_new_tokens;
  generate::SamplingOptions sampling;
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
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--checkpoint") {
      parsed.checkpoint = value();
    } else if (arg == "--prompt") {
      parsed.prompt = value();
    } else if (arg == "--max-new-tokens") {
      parsed.max_new_tokens = parse_number<std::int64_t>(arg, value(), "an integer >= 1");
      if (*parsed.max_new_tokens < 1) {
        throw UsageError("--max-new-tokens: expected an integer >= 1, got " +
                         std::to_string(*parsed.max_new_tokens));
      }
    } else if (arg == "--temperature") {
      const std::string text = value();
      parsed.sampling.temperature = parse_number<double>(arg, text, "a number >= 0");
      if (!(parsed.sampling.temperature >= 0) || !std::isfinite(parsed.sampling.temperature)) {
        throw UsageError("--temperature: expected a number >= 0 (0: greedy), got " + text);
      }
    } else if (arg == "--top-k") {
      const std::string text = value();
      parsed.sampling.top_k = parse_number<std::int64_t>(arg, text, "an integer >= 0");
      if (parsed.sampling.top_k < 0) {
        throw UsageError("--top-k: expected an integer >= 0 (0: every token), got " + text);
      }
    } else if (arg == "--seed") {
      parsed.sampling.seed = parse_number<std::uint64_t>(arg, value(), "an integer >= 0");
    } else {
      rest.push_back(arg);
    }
  }
  parsed.config = parse_config_args(rest, 0);
  if (parsed.checkpoint.empty()) throw UsageError("generate needs --checkpoint PATH");
  if (!parsed.prompt) throw UsageError("generate needs --prompt TEXT");
  if (!parsed.max_new_tokens) throw UsageError("generate needs --max-new-tokens N");
  return parsed;
}

// The prompt's ids: whitespace-separated ids below `vocab_size` without a tokenizer.
std::vector<std::int32_t> prompt_ids(const std::string& prompt, data::BpeTokenizer* tokenizer,
                                     std::int64_t vocab_size) {
  std::vector<std::int32_t> ids;
  if (tokenizer != nullptr) {
    tokenizer->encode(prompt, ids);
  } else {
    std::istringstream words(prompt);
    std::string word;
    while (words >> word) {
      const auto id = parse_number<std::int64_t>(
          "--prompt", word, "whitespace-separated token ids (data.tokenizer is not set)");
      if (id < 0 || id >= vocab_size) {
        throw UsageError("--prompt: token id " + word + " is outside the vocabulary [0, " +
                         std::to_string(vocab_size) +
                         ") of the data (model.data_vocab_size, else model.vocab_size)");
      }
      ids.push_back(static_cast<std::int32_t>(id));
    }
  }
  if (ids.empty()) {
    throw UsageError("--prompt '" + prompt + "' encodes to no tokens; give at least one");
  }
  return ids;
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

std::string ids_text(const std::vector<std::int32_t>& ids) {
  std::string text;
  for (const std::int32_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

}  // namespace

int generate_command(const Args& args) {
  const GenerateArgs parsed = parse_generate_args(args);
  const Config config = load_config_file(parsed.config.path, parsed.config.overrides);
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
  // vocabulary]).
  const std::int64_t vocab = engine::data_vocab_size(config, tokenizer ? &*tokenizer : nullptr);
  const std::vector<std::int32_t> prompt =
      prompt_ids(*parsed.prompt, tokenizer ? &*tokenizer : nullptr, vocab);
  const auto prompt_len = static_cast<std::int64_t>(prompt.size());
  if (prompt_len + *parsed.max_new_tokens > config.model.seq_len) {
    throw UsageError(
        "--prompt (" + std::to_string(prompt_len) + " tokens) + --max-new-tokens " +
        std::to_string(*parsed.max_new_tokens) + " = " +
        std::to_string(prompt_len + *parsed.max_new_tokens) +
        " positions, more than model.seq_len = " + std::to_string(config.model.seq_len));
  }

  const std::unique_ptr<DeviceContext> device = make_device_context(engine::rank_device(config, 0));
  nn::Model model = engine::make_model(config);
  const checkpoint::CheckpointReader reader(resolve_checkpoint_path(parsed.checkpoint));
  const generate::ModelWeights weights = generate::ModelWeights::from_checkpoint(
      model, reader, zero::compute_dtype(config), *device, parsed.config.path);
  generate::Decoder decoder(model, weights, *device, config.model.seq_len);
  generate::TokenSampler sampler(parsed.sampling, vocab);

  std::vector<std::int32_t> text = prompt;
  std::vector<float> logits = decoder.feed(prompt);
  for (std::int64_t i = 0; i < *parsed.max_new_tokens; ++i) {
    const std::int32_t next = sampler.sample(logits);
    text.push_back(next);
    if (i + 1 < *parsed.max_new_tokens) logits = decoder.feed(std::span(&text.back(), 1));
  }
  const std::string out = tokenizer ? tokenizer->decode(text) : ids_text(text);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace zt::apps
