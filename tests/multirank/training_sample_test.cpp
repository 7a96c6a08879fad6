// train.sample_every on 2 ranks as threads: sampling changes no training result bit for bit
// (stages 0 and 3; decoding is collective, so every rank takes part), rank 0 reports a
// sample exactly on the steps that sample, with its prompt, and a sample's memory peak is at
// most training's plus the KV cache (Note [Sample memory]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/memory_tracker.h"
#include "rank_training.h"
#include "runtime/engine/trainer.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr int kWorld = 2;
constexpr int kSteps = 5;
// The tiny GPT's KV cache for one prompt: k and v of 2 layers, 8 positions of 2 heads of 8,
// in f32.
constexpr std::int64_t kKvCacheBytes = 2 * 2 * 8 * 2 * 8 * 4;

Config config_for(int stage, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_run_overrides(stage, kSteps);
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "training_sample_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;
  std::vector<std::string> samples;         // rank 0's, per step
  std::vector<std::string> sample_prompts;  // rank 0's, per step
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
  for (const auto& m : trained.metrics[0]) {
    outcome.samples.push_back(m.sample);
    outcome.sample_prompts.push_back(m.sample_prompt);
  }
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
  // The sample adds at most its KV cache to the peak (Note [Sample memory]).
  for (std::size_t rank = 0; rank < plain.peak_bytes.size(); ++rank) {
    EXPECT_LE(sampled.peak_bytes[rank], plain.peak_bytes[rank] + kKvCacheBytes) << "rank " << rank;
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
      // The prompt, 4 ids, is where the sample starts.
      std::istringstream prompt_ids(sampled.sample_prompts[i]);
      int prompt_count = 0;
      for (int id = 0; prompt_ids >> id;) ++prompt_count;
      EXPECT_EQ(prompt_count, 4) << "'" << sampled.sample_prompts[i] << "'";
      EXPECT_TRUE(sampled.samples[i].starts_with(sampled.sample_prompts[i] + " "))
          << "'" << sampled.sample_prompts[i] << "' in '" << sampled.samples[i] << "'";
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

// Stage 3 on 2 ranks, the memory timeline of a run that samples after its last step: what
// is live during the sample (phase "sample", training's tracker) never exceeds the training
// steps' peak plus the KV cache, and the cache is there (the sample allocates at least it).
TEST(TrainingSampleMemory, AStageThreeSamplePeaksAtMostAtTrainingsPeakPlusTheKvCache) {
  const Config config =
      config_for(3, {"train.sample_every=2", "train.sample_tokens=4", "runtime.memory_profile=true",
                     "runtime.memory_profile_steps=" + std::to_string(kSteps)});
  std::vector<std::vector<MemoryEvent>> timelines(kWorld);
  testing::run_trainers(
      kWorld, config,
      [&](int rank, engine::Trainer& trainer, comm::Communicator&, MemoryTracker& tracker) {
        trainer.run();
        timelines[static_cast<std::size_t>(rank)] = tracker.timeline();
      });
  for (int rank = 0; rank < kWorld; ++rank) {
    std::int64_t training_peak = 0;
    std::int64_t sample_peak = 0;
    std::int64_t before_sample = -1;  // live bytes when the first sample began
    std::int64_t live = 0;
    for (const MemoryEvent& event : timelines[static_cast<std::size_t>(rank)]) {
      if (event.phase == "sample") {
        if (before_sample < 0) before_sample = live;
        sample_peak = std::max(sample_peak, event.total_bytes);
      } else if (event.step >= 1) {
        training_peak = std::max(training_peak, event.total_bytes);
      }
      live = event.total_bytes;
    }
    ASSERT_GE(before_sample, 0) << "rank " << rank << ": no allocation in phase \"sample\"";
    EXPECT_GE(sample_peak - before_sample, kKvCacheBytes) << "rank " << rank;
    EXPECT_LE(sample_peak, training_peak + kKvCacheBytes)
        << "rank " << rank << ": training peak " << training_peak;
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
