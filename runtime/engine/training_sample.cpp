// train.sample_every: the prompt taken once from the data, the tokenizer loaded once, and each
// sample decoded on a device context of the sampler's own.
#include "runtime/engine/training_sample.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "data/distributed_sampler.h"
#include "runtime/engine/data_vocabulary.h"
#include "runtime/generate/decoder.h"
#include "runtime/generate/model_weights.h"
#include "runtime/generate/token_sampler.h"
#include "sharding/compute_dtype.h"

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
                               bool from_validation, const Device& device)
    : sample_tokens_(config.train.sample_tokens),
      seq_len_(config.model.seq_len),
      compute_dtype_(zero::compute_dtype(config)),
      prompt_(read_prompt(config, prompt_source)),
      tokenizer_(load_tokenizer(config)),
      vocab_limit_(data_vocab_size(config, tokenizer_ ? &*tokenizer_ : nullptr)),
      device_(make_device_context(device)) {
  description_ = "greedy, " + std::to_string(sample_tokens_) + " tokens after the first " +
                 std::to_string(prompt_.size()) + " of the " +
                 (from_validation ? "validation" : "training") + " data";
}

TrainingSample::~TrainingSample() = default;

// Note [Sample memory]
// A sample needs the full weights in the compute dtype, the KV cache and one token's
// activations: rank 0 allocates them on a device context of the sampler's own, whose
// tracker is not training's, and frees them before training goes on. So they appear in no
// rank's memory.json and no estimate (on a GPU they are real memory beside the training
// peak: the model's size in the compute dtype and fp32, plus the cache). The gather that
// brings the full weights to every rank (ZeroStrategy::full_parameters) is the training
// tracker's: stages 1-3 gather the fp32 masters into a full-size workspace, counted in phase
// "sample", which can raise a stage-3 rank's measured peak above the estimate.
std::string TrainingSample::generate(nn::Model& model, std::span<const float> parameters) {
  const generate::ModelWeights weights(model, parameters, compute_dtype_, *device_);
  generate::Decoder decoder(model, weights, *device_, seq_len_);
  generate::TokenSampler greedy({.temperature = 0.0, .top_k = 0, .seed = 0}, vocab_limit_);
  std::vector<std::int32_t> text = prompt_;
  std::vector<float> logits = decoder.feed(prompt_);
  for (std::int64_t i = 0; i < sample_tokens_; ++i) {
    text.push_back(greedy.sample(logits));
    if (i + 1 < sample_tokens_) logits = decoder.feed(std::span(&text.back(), 1));
  }
  if (tokenizer_) return valid_utf8(tokenizer_->decode(text));
  std::string ids;
  for (const std::int32_t id : text) ids += (ids.empty() ? "" : " ") + std::to_string(id);
  return ids;
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
