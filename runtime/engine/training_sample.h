// TrainingSample: train.sample_every's text during training: after the steps it names, rank 0
// decodes train.sample_tokens tokens greedily after a fixed prompt from the weights every rank
// gathered, through generate::Decoder, on a device context of its own (Note [Sample memory]).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/device/device_context.h"
#include "data/batch.h"
#include "data/bpe_tokenizer.h"
#include "nn/model.h"

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

class TrainingSample {
 public:
  // Rank 0's sampler. The prompt is the first tokens of `prompt_source`'s sample 0 (the
  // validation samples when the run has them, `from_validation`; else the training ones);
  // data.tokenizer, when set, is loaded here (FormatError when it is not BPE). `device`: the
  // rank's device; the sampler opens a context of its own on it.
  TrainingSample(const Config& config, const data::BatchSource& prompt_source, bool from_validation,
                 const Device& device);
  ~TrainingSample();

  // How the sample is made, for the progress output: "greedy, 24 tokens after the first 8
  // of the validation data".
  const std::string& description() const { return description_; }
  // The prompt and the new tokens, decoded (with data.tokenizer) or as ids, from the model's
  // full unpadded parameters `parameters` (FlatLayout order, f32, as
  // ZeroStrategy::full_parameters returns them). `model` is only read.
  std::string generate(nn::Model& model, std::span<const float> parameters);

 private:
  std::int64_t sample_tokens_;
  std::int64_t seq_len_;
  DType compute_dtype_;
  std::vector<std::int32_t> prompt_;
  std::optional<data::BpeTokenizer> tokenizer_;
  std::int64_t vocab_limit_;  // ids a sample may draw: the data's vocabulary (data_vocabulary.h)
  std::unique_ptr<DeviceContext> device_;  // the sample's own: its tracker is not training's
  std::string description_;
};

// A sample's text on one line: newlines and other control characters escaped as in C.
std::string one_line(const std::string& text);

}  // namespace zt::engine
