// TrainingSample: train.sample_every's text during training: after the steps it names, every
// rank decodes train.sample_tokens tokens greedily after a fixed prompt with the training
// model as it is sharded (ShardedDecoder), and rank 0 turns them into text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "data/batch.h"
#include "data/bpe_tokenizer.h"
#include "runtime/engine/sharded_decoder.h"

namespace zt::engine {

// Prompt tokens a sample starts from: a few words of text, so the continuation shows what the
// model learned rather than what it was given (fewer when model.seq_len leaves less room).
inline constexpr std::int64_t kSamplePromptTokens = 8;

// Whether training samples after `step` (every train.sample_every steps and after the last).
bool samples_after(const Config& config, std::int64_t step);

// ConfigError naming train.sample_every for a model that is not a language model
// (`targets_are_tokens` false), and train.sample_tokens with model.seq_len when the sample
// leaves no position for a prompt. Every rank checks, so every rank refuses alike.
void check_sample_keys(const Config& config, bool targets_are_tokens);

// A sample's text: the prompt, then what the model wrote after it.
struct SampleText {
  std::string prompt;  // a prefix of `text`
  std::string text;    // the prompt and the new tokens, decoded
};

class TrainingSample {
 public:
  // A rank's sampler: every rank decodes (collective; Note [Decoding the sharded model]), rank
  // 0 alone makes the text. The prompt is the first tokens of `prompt_source`'s sample 0 (the
  // validation samples when the run has them, `from_validation`; else the training ones);
  // data.tokenizer, when set, is loaded here (FormatError when it is not BPE; every rank
  // loads it, so every rank refuses alike).
  TrainingSample(const Config& config, const data::BatchSource& prompt_source, bool from_validation,
                 const ShardedModel& model);

  // How the sample is made, for the progress output: "greedy, 24 tokens after the first 8
  // of the validation data".
  const std::string& description() const { return description_; }
  // The prompt and the new tokens from the model's weights as the rank holds them, decoded
  // (with data.tokenizer) or as ids; empty on ranks other than 0. Collective. Allocates on
  // the training tracker in phase "sample" (Note [Sample memory]).
  SampleText take();

 private:
  std::int64_t sample_tokens_;
  std::vector<std::int32_t> prompt_;
  std::optional<data::BpeTokenizer> tokenizer_;
  std::int64_t vocab_limit_;  // ids a sample may draw: the data's vocabulary (data_vocabulary.h)
  ShardedModel model_;
  ShardedDecoder decoder_;
  std::string description_;
};

// The trainer's train.sample_every sampler, on every rank: null when it samples nothing
// (train.sample_every = 0, or the estimator's meta device: Note [Sample memory]). The prompt
// comes from `validation` when there is one, else from `source`; ConfigError when neither.
std::unique_ptr<TrainingSample> make_training_sample(const Config& config,
                                                     const data::BatchSource* validation,
                                                     const data::BatchSource* source,
                                                     const ShardedModel& model);

// A sample's text on one line: newlines and other control characters escaped as in C.
std::string one_line(const std::string& text);

}  // namespace zt::engine
