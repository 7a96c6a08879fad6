// train.sample_every on 2 ranks as threads: sampling changes no training result bit for bit
// (stages 0 and 3; the gather is collective, so every rank takes part), rank 0 reports a
// sample exactly on the steps that sample, and stage 0's memory peak is unchanged (its
// gather allocates nothing; Note [Sample memory]).
#include <gtest/gtest.h>

#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "rank_training.h"
#include "runtime/engine/trainer.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr int kWorld = 2;
constexpr int kSteps = 5;

Config config_for(int stage, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_run_overrides(stage, kSteps);
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "training_sample_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;
  std::vector<std::string> samples;  // rank 0's, per step
  std::vector<std::string> other_rank_samples;
  std::vector<float> parameters;
  std::vector<std::int64_t> peak_bytes;  // per rank
};

Outcome train(const Config& config) {
  testing::TrainingOutcome trained = testing::train_on_ranks(kWorld, config);
  Outcome outcome;
  outcome.losses = std::move(trained.losses);
  outcome.parameters = std::move(trained.parameters);
  for (const MemorySnapshot& memory : trained.memory) {
    outcome.peak_bytes.push_back(memory.total_peak_bytes);
  }
  for (const auto& m : trained.metrics[0]) outcome.samples.push_back(m.sample);
  for (int rank = 1; rank < kWorld; ++rank) {
    for (const auto& m : trained.metrics[static_cast<std::size_t>(rank)]) {
      outcome.other_rank_samples.push_back(m.sample);
    }
  }
  return outcome;
}

class TrainingSample : public ::testing::TestWithParam<int> {};

TEST_P(TrainingSample, SamplingChangesNoTrainingResult) {
  const int stage = GetParam();
  const Outcome plain = train(config_for(stage, {}));
  const Outcome sampled =
      train(config_for(stage, {"train.sample_every=2", "train.sample_tokens=4"}));
  ASSERT_EQ(plain.losses.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(sampled.losses.size(), plain.losses.size());
  EXPECT_EQ(
      std::memcmp(plain.losses.data(), sampled.losses.data(), plain.losses.size() * sizeof(double)),
      0)
      << "stage " << stage << ": losses differ";
  ASSERT_EQ(plain.parameters.size(), sampled.parameters.size());
  EXPECT_EQ(std::memcmp(plain.parameters.data(), sampled.parameters.data(),
                        plain.parameters.size() * sizeof(float)),
            0)
      << "stage " << stage << ": final weights differ";
  if (stage == 0) {
    EXPECT_EQ(sampled.peak_bytes, plain.peak_bytes);
  }

  // Steps 2 and 4 (sample_every) and 5 (the last) sample: the prompt (4 = seq_len 8 - 4
  // tokens, fewer than kSamplePromptTokens) and 4 new ids, on rank 0 only.
  for (int step = 1; step <= kSteps; ++step) {
    const auto i = static_cast<std::size_t>(step - 1);
    EXPECT_EQ(plain.samples[i], "") << "step " << step;
    EXPECT_EQ(sampled.other_rank_samples[i], "") << "step " << step;
    if (step % 2 == 0 || step == kSteps) {
      std::istringstream ids(sampled.samples[i]);
      int count = 0;
      for (int id = 0; ids >> id; ++count) EXPECT_TRUE(id >= 0 && id < 16) << id;
      EXPECT_EQ(count, 8) << "step " << step << ": '" << sampled.samples[i] << "'";
    } else {
      EXPECT_EQ(sampled.samples[i], "") << "step " << step;
    }
  }
  // The prompt is fixed: every sample starts with the same 4 ids.
  EXPECT_EQ(sampled.samples[1].substr(0, 6), sampled.samples[3].substr(0, 6));
}

INSTANTIATE_TEST_SUITE_P(Stages, TrainingSample, ::testing::Values(0, 3),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(param_info.param);
                         });

// A vocabulary of 64 rows of which the data uses 4 (Note [Padded vocabulary]): the untrained
// head's largest logit is nearly always a padded row's, and greedy sampling still never draws
// one (measured with the model's whole vocabulary as the limit: ids up to 61 drawn).
TEST(TrainingSampleKeys, GreedySamplesNeverDrawAPaddedVocabularyId) {
  const Outcome sampled = train(config_for(0, {"model.vocab_size=64", "model.data_vocab_size=4",
                                               "train.sample_every=1", "train.sample_tokens=4"}));
  ASSERT_EQ(sampled.samples.size(), static_cast<std::size_t>(kSteps));
  for (const std::string& sample : sampled.samples) {
    std::istringstream ids(sample);
    int count = 0;
    for (int id = 0; ids >> id; ++count) EXPECT_TRUE(id >= 0 && id < 4) << id << " in " << sample;
    EXPECT_EQ(count, 8) << sample;
  }
}

TEST(TrainingSampleKeys, ASampleThatLeavesNoRoomForAPromptIsRefused) {
  const Config config = config_for(0, {"train.sample_every=2", "train.sample_tokens=8"});
  std::string error;
  try {
    train(config);
  } catch (const std::exception& e) {  // run_ranks rethrows each rank's ConfigError
    error = e.what();
  }
  EXPECT_NE(error.find("train.sample_tokens = 8"), std::string::npos) << error;
  EXPECT_NE(error.find("model.seq_len = 8"), std::string::npos) << error;
}

}  // namespace
}  // namespace zt
