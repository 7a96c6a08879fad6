// The ZeRO contract for the Llama family: for the same seed and global batch, every ZeRO
// stage at world 1, 2 and 4, with and without accumulation, trains the tiny Llama like stage 0
// on one rank, within fp32 round-off (1e-5 relative on the losses, 1e-5 absolute on the final
// parameters); with a tied head and with activation checkpointing too. Llama has no biases,
// so no parameter has the round-off-only gradient GPT's key bias has (Note [Adam and the key
// bias] in zero_equivalence_test.cpp): AdamW is held to the same bound everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "rank_training.h"
#include "runtime/estimate/memory_estimator.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr std::int64_t kGlobalBatch = 16;
constexpr int kSteps = 20;

Config llama_config(int stage, int world_size, std::int64_t accum,
                    std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides = testing::tiny_llama_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=" + std::to_string(kSteps), "zero.stage=" + std::to_string(stage),
                    "train.grad_accum_steps=" + std::to_string(accum),
                    "train.micro_batch_size=" + std::to_string(kGlobalBatch / (accum * world_size)),
                    "optimizer.type=adamw"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "llama_test.toml", overrides);
}

void expect_matches(const testing::TrainingOutcome& outcome,
                    const testing::TrainingOutcome& reference, const std::string& what) {
  ASSERT_EQ(outcome.losses.size(), reference.losses.size()) << what;
  for (std::size_t i = 0; i < reference.losses.size(); ++i) {
    EXPECT_NEAR(outcome.losses[i], reference.losses[i], 1e-5 * std::fabs(reference.losses[i]))
        << what << ", step " << i + 1;
  }
  ASSERT_EQ(outcome.parameters.size(), reference.parameters.size()) << what;
  float worst = 0.0f;
  for (std::size_t i = 0; i < reference.parameters.size(); ++i) {
    worst = std::max(worst, std::fabs(outcome.parameters[i] - reference.parameters[i]));
  }
  EXPECT_LE(worst, 1e-5f) << what << ": largest parameter difference";
  EXPECT_TRUE(outcome.ranks_agree) << what << ": ranks exported different parameters";
}

const testing::TrainingOutcome& reference() {
  static const testing::TrainingOutcome outcome = testing::train_on_ranks(1, llama_config(0, 1, 1));
  return outcome;
}

TEST(LlamaEquivalence, TheReferenceLearns) {
  ASSERT_EQ(reference().losses.size(), static_cast<std::size_t>(kSteps));
  EXPECT_LT(reference().losses.back(), 0.9 * reference().losses.front());
}

class LlamaEquivalence : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(LlamaEquivalence, MatchesStageZeroOnOneRank) {
  const auto [stage, world_size, accum] = GetParam();
  const std::string what = "stage " + std::to_string(stage) + ", world " +
                           std::to_string(world_size) + ", accumulation " + std::to_string(accum);
  expect_matches(testing::train_on_ranks(world_size, llama_config(stage, world_size, accum)),
                 reference(), what);
}

INSTANTIATE_TEST_SUITE_P(StagesWorldsAccumulation, LlamaEquivalence,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3),
                                            ::testing::Values(1, 2, 4), ::testing::Values(1, 4)),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "World" + std::to_string(std::get<1>(param_info.param)) +
                                  "Accum" + std::to_string(std::get<2>(param_info.param));
                         });

TEST(LlamaTiedHead, EveryStageMatchesOneRank) {
  const std::vector<std::string> tied = {"model.tie_embeddings=true"};
  const testing::TrainingOutcome single = testing::train_on_ranks(1, llama_config(0, 1, 1, tied));
  for (int stage = 0; stage <= 3; ++stage) {
    for (int world : {2, 4}) {
      expect_matches(testing::train_on_ranks(world, llama_config(stage, world, 1, tied)), single,
                     "tied, stage " + std::to_string(stage) + ", world " + std::to_string(world));
    }
  }
}

// Recomputing a block's forward in backward gives the bits the kept activations give.
TEST(LlamaActivationCheckpointing, GivesBitIdenticalLossesAndParameters) {
  for (int stage : {0, 3}) {
    const testing::TrainingOutcome plain = testing::train_on_ranks(2, llama_config(stage, 2, 1));
    const testing::TrainingOutcome checkpointed = testing::train_on_ranks(
        2, llama_config(stage, 2, 1, {"activation_checkpointing.enabled=true"}));
    EXPECT_EQ(checkpointed.losses, plain.losses) << "stage " << stage;
    EXPECT_EQ(checkpointed.parameters, plain.parameters) << "stage " << stage;
    EXPECT_LT(
        checkpointed.memory[0].peak_bytes[static_cast<std::size_t>(MemoryCategory::kActivations)],
        plain.memory[0].peak_bytes[static_cast<std::size_t>(MemoryCategory::kActivations)])
        << "stage " << stage;
  }
}

// The estimate (a meta-device run) is every rank's measured peak, byte for byte, in every
// category: the Llama layers allocate through the tracker alike on both.
TEST(LlamaMemoryEstimate, EqualsEveryRanksMeasuredPeak) {
  estimate::EstimateOptions options;
  options.count_comm_scratch = false;  // the in-process communicators count none
  for (int stage : {0, 3}) {
    for (const char* dtype : {"fp32", "bf16"}) {
      const Config config = llama_config(stage, 2, 2, {std::string("precision.dtype=") + dtype});
      const testing::TrainingOutcome measured = testing::train_on_ranks(2, config);
      for (int rank = 0; rank < 2; ++rank) {
        const MemorySnapshot& actual = measured.memory[static_cast<std::size_t>(rank)];
        const MemorySnapshot predicted = estimate::estimate_rank(config, 2, rank, options).memory;
        const std::string what =
            "stage " + std::to_string(stage) + ", " + dtype + ", rank " + std::to_string(rank);
        EXPECT_EQ(predicted.total_peak_bytes, actual.total_peak_bytes) << what;
        EXPECT_EQ(predicted.peak_bytes, actual.peak_bytes) << what;
      }
    }
  }
}

}  // namespace
}  // namespace zt
