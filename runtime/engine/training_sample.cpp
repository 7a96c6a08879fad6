// train.sample_every: the prompt taken once from the data, the tokenizer loaded once, and each
// sample decoded with the training model as it is sharded, in the training tracker's memory.
#include "runtime/engine/training_sample.h"

#include <algorithm>
#include <cstdio>
#include <span>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "runtime/engine/data_vocabulary.h"
#include "runtime/generate/token_sampler.h"

namespace zt::engine {
namespace {

std::int64_t prompt_tokens(const Config& config) {
  return std::min(kSamplePromptTokens, config.model.seq_len - config.train.sample_tokens);
}

// The first prompt_tokens(config) ids of `source`'s sample 0, read into host memory of its own.
std::vector<std::int32_t> read_prompt(const Config& config, const data::BatchSource& source) {
  MemoryTracker host(Device::cpu());
  const data::Batch batch = source.load(data::SampleRange{0, 1}, host);
  ZT_CHECK(batch.inputs.dtype() == DType::kI32 && batch.inputs.numel() >= prompt_tokens(config),
           "a language model's sample holds model.seq_len token ids");
  const auto* ids = static_cast<const std::int32_t*>(batch.inputs.data());
  return {ids, ids + prompt_tokens(config)};
}

// data.tokenizer, whose ids must all be rows of the model's vocabulary.
std::optional<data::BpeTokenizer> load_tokenizer(const Config& config) {
  if (config.data.tokenizer.empty()) return std::nullopt;
  data::BpeTokenizer tokenizer = data::BpeTokenizer::load(config.data.tokenizer);
  if (tokenizer.vocab_size() > config.model.vocab_size) {
    throw ConfigError(where_set(config, "model.vocab_size") +
                      ": model.vocab_size = " + std::to_string(config.model.vocab_size) +
                      " is smaller than data.tokenizer '" + config.data.tokenizer +
                      "''s vocabulary of " + std::to_string(tokenizer.vocab_size()));
  }
  return tokenizer;
}

// `bytes` with every byte that does not start or continue a well-formed UTF-8 character
// replaced by U+FFFD: a greedy decode may cut a character between tokens, and metrics.jsonl
// must stay valid JSON text.
std::string valid_utf8(const std::string& bytes) {
  std::string text;
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const std::size_t length = lead < 0x80                   ? 1
                               : lead >= 0xc2 && lead < 0xe0 ? 2
                               : lead >= 0xe0 && lead < 0xf0 ? 3
                               : lead >= 0xf0 && lead < 0xf5 ? 4
                                                             : 0;
    bool whole = length > 0 && i + length <= bytes.size();
    for (std::size_t k = 1; whole && k < length; ++k) {
      whole = (static_cast<unsigned char>(bytes[i + k]) & 0xc0) == 0x80;
    }
    if (whole) {
      text.append(bytes, i, length);
      i += length;
    } else {
      text += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    }
  }
  return text;
}

// The prompt's and the new tokens' bytes as valid UTF-8 text (valid_utf8), split where the
// prompt ends. A token may end inside a character: the split then moves past the bytes that
// continue it, so the whole character goes to the prompt and `prompt + rest` is exactly
// valid_utf8 of all the bytes (the split is at no continuation byte, which no character
// reaches across).
SampleText split_text(const std::string& prompt_bytes, const std::string& new_bytes) {
  const std::string bytes = prompt_bytes + new_bytes;
  std::size_t split = prompt_bytes.size();
  while (split < bytes.size() && (static_cast<unsigned char>(bytes[split]) & 0xc0) == 0x80) ++split;
  SampleText sample;
  sample.prompt = valid_utf8(bytes.substr(0, split));
  sample.text = sample.prompt + valid_utf8(bytes.substr(split));
  return sample;
}

std::string id_text(std::span<const std::int32_t> ids) {
  std::string text;
  for (const std::int32_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return text;
}

}  // namespace

bool samples_after(const Config& config, std::int64_t step) {
  const std::int64_t every = config.train.sample_every;
  return every > 0 && (step % every == 0 || step == config.train.steps);
}

void check_sample_keys(const Config& config, bool targets_are_tokens) {
  if (config.train.sample_every == 0) return;
  if (!targets_are_tokens) {
    throw ConfigError(
        where_set(config, "train.sample_every") +
        ": train.sample_every = " + std::to_string(config.train.sample_every) +
        " samples text from a language model, and this model's targets are not "
        "tokens; set train.sample_every = 0 or use model.type = \"gpt\" or \"llama\"");
  }
  if (config.train.sample_tokens >= config.model.seq_len) {
    throw ConfigError(where_set(config, "train.sample_tokens") +
                      ": train.sample_tokens = " + std::to_string(config.train.sample_tokens) +
                      " leaves no position for a prompt in model.seq_len = " +
                      std::to_string(config.model.seq_len) +
                      "; set train.sample_tokens below model.seq_len");
  }
}

TrainingSample::TrainingSample(const Config& config, const data::BatchSource& prompt_source,
                               bool from_validation, const ShardedModel& model)
    : sample_tokens_(config.train.sample_tokens),
      prompt_(read_prompt(config, prompt_source)),
      tokenizer_(load_tokenizer(config)),
      vocab_limit_(data_vocab_size(config, tokenizer_ ? &*tokenizer_ : nullptr)),
      model_(model),
      decoder_(model, config.model.seq_len) {
  description_ = "greedy, " + std::to_string(sample_tokens_) + " tokens after the first " +
                 std::to_string(prompt_.size()) + " of the " +
                 (from_validation ? "validation" : "training") + " data";
}

// Note [Sample memory]
// A sample decodes with the weights training holds, as it holds them (Note [Decoding the
// sharded model]): nothing is copied, and at stage 3 one block at a time is gathered, as in
// a forward. What it allocates is the training tracker's, in phase "sample": the KV cache
// (2 x layers x 1 prompt x model.seq_len x kv heads x head_dim in the compute dtype), the
// prompt's activations through one block at a time, and its logits. Training's own forward
// of a micro-batch holds at least as much beside the same gathered blocks (Note
// [Evaluation memory]) as long as the prompt is no longer than a micro-batch's tokens
// (train.micro_batch_size x model.seq_len; the prompt is at most kSamplePromptTokens), so a
// sample's peak is at most the training peak plus the KV cache. The estimator's meta
// device does not sample (it has no values to select tokens from), so its estimate leaves
// the cache out: on a model of 32 layers of 8 kv heads of 128 at seq_len 8192 in bf16 that
// is 1 GiB (2 x 32 x 8192 x 8 x 128 x 2 bytes), on top of the estimated peak. Every rank
// decodes (the gathers are collective), so the cache is on every rank's device.
SampleText TrainingSample::take() {
  MemoryTracker& tracker = model_.device.tracker();
  const std::string phase = tracker.phase();
  tracker.set_phase("sample");
  const generate::SamplingOptions greedy{.temperature = 0.0, .top_k = 0, .seed = 0};
  const std::vector<std::int32_t> continuation =
      decoder_.generate({prompt_}, sample_tokens_, greedy, vocab_limit_).front();
  tracker.set_phase(phase);
  if (model_.comm.rank() != 0) return {};
  if (tokenizer_) return split_text(tokenizer_->decode(prompt_), tokenizer_->decode(continuation));
  SampleText sample;
  sample.prompt = id_text(prompt_);
  sample.text = sample.prompt + " " + id_text(continuation);
  return sample;
}

std::unique_ptr<TrainingSample> make_training_sample(const Config& config,
                                                     const data::BatchSource* validation,
                                                     const data::BatchSource* source,
                                                     const ShardedModel& model) {
  // The estimator's meta device samples nothing (Note [Sample memory]).
  if (config.train.sample_every == 0 || model.device.device().meta) return nullptr;
  const data::BatchSource* prompt_source = validation ? validation : source;
  if (prompt_source == nullptr) {
    throw ConfigError(where_set(config, "train.sample_every") +
                      ": train.sample_every takes its prompt from the data, and this trainer "
                      "has no batch source (TrainingParts::source or ::validation)");
  }
  return std::make_unique<TrainingSample>(config, *prompt_source, validation != nullptr, model);
}

std::string one_line(const std::string& text) {
  std::string line;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\t') {
      line += "\\t";
    } else if (c == '\\') {
      line += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      line += escaped;
    } else {
      line += c;
    }
  }
  return line;
}

}  // namespace zt::engine
