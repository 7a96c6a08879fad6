// Hybrid sharding (zero.shard_group_size, Note [Hybrid sharding] in sharding/shard_groups.h):
// stages 1-3 at world 4 in two groups of 2 train GPT and Llama like one rank (1e-6 relative
// on the fp32 losses; the order of the gradient sums is the only difference) and like the
// flat world of 4; the parameter all-gathers stay inside the group (half a padded model a
// refresh instead of three quarters) and the shards are all-reduced across the groups; a
// group size that does not divide the world, or one set with stage 0, is refused naming the
// key and the numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator.h"
#include "core/config/config_loader.h"
#include "key_bias_mask.h"
#include "rank_training.h"
#include "runtime/estimate/memory_estimator.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr std::int64_t kGlobalBatch = 16;
constexpr int kSteps = 30;
constexpr int kWorld = 4;
constexpr int kGroup = 2;

Config tiny_config(const std::string& model, int stage, int world_size, std::int64_t accum,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides =
      model == "llama" ? testing::tiny_llama_overrides() : testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=" + std::to_string(kSteps), "zero.stage=" + std::to_string(stage),
                    "train.grad_accum_steps=" + std::to_string(accum),
                    "train.micro_batch_size=" + std::to_string(kGlobalBatch / (accum * world_size)),
                    "optimizer.type=adamw"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "hsdp_test.toml", overrides);
}

std::string group_key(int size) { return "zero.shard_group_size=" + std::to_string(size); }

void expect_same_losses(const testing::TrainingOutcome& outcome,
                        const testing::TrainingOutcome& reference, const std::string& what) {
  ASSERT_EQ(outcome.losses.size(), reference.losses.size()) << what;
  for (std::size_t i = 0; i < reference.losses.size(); ++i) {
    EXPECT_NEAR(outcome.losses[i], reference.losses[i], 1e-6 * std::fabs(reference.losses[i]))
        << what << ", step " << i + 1;
  }
  EXPECT_TRUE(outcome.ranks_agree) << what << ": ranks exported different parameters";
}

const testing::TrainingOutcome& one_rank(const std::string& model) {
  static const testing::TrainingOutcome gpt =
      testing::train_on_ranks(1, tiny_config("gpt", 0, 1, 1));
  static const testing::TrainingOutcome llama =
      testing::train_on_ranks(1, tiny_config("llama", 0, 1, 1));
  return model == "gpt" ? gpt : llama;
}

class HybridSharding : public ::testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(HybridSharding, TwoGroupsOfTwoTrainLikeOneRankAndLikeTheFlatWorld) {
  const auto [model, stage, accum] = GetParam();
  const std::string what = model + ", stage " + std::to_string(stage) + ", accumulation " +
                           std::to_string(accum) + ", world 4 in groups of 2";
  const testing::TrainingOutcome& single = one_rank(model);
  ASSERT_LT(single.losses.back(), single.losses.front()) << model << " learns";
  const testing::TrainingOutcome hybrid = testing::train_on_ranks(
      kWorld, tiny_config(model, stage, kWorld, accum, {group_key(kGroup)}));
  const testing::TrainingOutcome flat =
      testing::train_on_ranks(kWorld, tiny_config(model, stage, kWorld, accum));
  expect_same_losses(hybrid, single, what + " vs one rank");
  expect_same_losses(hybrid, flat, what + " vs the flat world of 4");
  ASSERT_EQ(hybrid.parameters.size(), single.parameters.size()) << what;
  // GPT's key bias has a round-off-only gradient (Note [Adam and the key bias] in
  // zero_equivalence_test.cpp): Adam moves it by up to lr per step in any direction.
  const std::vector<bool> key_bias = model == "gpt"
                                         ? testing::key_bias_mask(tiny_config(model, 0, 1, 1))
                                         : std::vector<bool>(single.parameters.size(), false);
  float worst = 0.0f;
  for (std::size_t i = 0; i < single.parameters.size(); ++i) {
    const float difference = std::fabs(hybrid.parameters[i] - single.parameters[i]);
    if (key_bias[i]) {
      EXPECT_LE(difference, 0.01f * kSteps) << what << ": key bias element " << i;
    } else {
      worst = std::max(worst, difference);
    }
  }
  EXPECT_LE(worst, 1e-5f) << what << ": largest parameter difference";
}

INSTANTIATE_TEST_SUITE_P(ModelsStagesAccumulation, HybridSharding,
                         ::testing::Combine(::testing::Values("gpt", "llama"),
                                            ::testing::Values(1, 2, 3), ::testing::Values(1, 2)),
                         [](const auto& param_info) {
                           return std::get<0>(param_info.param) + "Stage" +
                                  std::to_string(std::get<1>(param_info.param)) + "Accum" +
                                  std::to_string(std::get<2>(param_info.param));
                         });

// What goes over the wire says where each collective ran: a parameter all-gather inside a
// group of 2 sends half the (group-padded) model, inside the flat world three quarters; and
// only the hybrid run all-reduces gradient shards (the flat one all-reduces the loss alone).
TEST(HybridShardingTraffic, GathersStayInTheGroupAndShardsAreAllReducedAcrossIt) {
  for (int stage : {2, 3}) {
    const testing::TrainingOutcome hybrid =
        testing::train_on_ranks(kWorld, tiny_config("gpt", stage, kWorld, 1, {group_key(kGroup)}));
    const testing::TrainingOutcome flat =
        testing::train_on_ranks(kWorld, tiny_config("gpt", stage, kWorld, 1));
    for (std::size_t rank = 0; rank < kWorld; ++rank) {
      const std::string what = "stage " + std::to_string(stage) + ", rank " + std::to_string(rank);
      // Summed over the run: a step's own figure depends on when a prefetch in flight
      // completes (bytes are counted as ops complete), the run's total does not.
      const auto run_total = [&](const testing::TrainingOutcome& outcome, auto field) {
        double total = 0;
        for (const engine::StepMetrics& m : outcome.metrics[rank]) {
          total += static_cast<double>(m.*field);
        }
        return total;
      };
      EXPECT_NEAR(run_total(hybrid, &engine::StepMetrics::all_gather_bytes) /
                      run_total(flat, &engine::StepMetrics::all_gather_bytes),
                  (1.0 / 2.0) / (3.0 / 4.0), 0.05)
          << what;
      EXPECT_GT(run_total(hybrid, &engine::StepMetrics::all_reduce_bytes),
                10 * run_total(flat, &engine::StepMetrics::all_reduce_bytes))
          << what;
    }
  }
}

// The estimator replays hybrid sharding on its meta communicators (split like the real ones,
// from the same requests): its peak is every rank's measured peak, byte for byte, in every
// category; and the group's shards make each rank hold what a flat world of 2 would.
TEST(HybridShardingEstimate, EqualsEveryRanksMeasuredPeak) {
  estimate::EstimateOptions options;
  options.count_comm_scratch = false;  // the in-process communicators count none
  for (int stage : {1, 2, 3}) {
    const Config config = tiny_config("llama", stage, kWorld, 1, {group_key(kGroup)});
    const testing::TrainingOutcome measured = testing::train_on_ranks(kWorld, config);
    for (int rank = 0; rank < kWorld; ++rank) {
      const MemorySnapshot& actual = measured.memory[static_cast<std::size_t>(rank)];
      const MemorySnapshot predicted =
          estimate::estimate_rank(config, kWorld, rank, options).memory;
      const std::string what = "stage " + std::to_string(stage) + ", rank " + std::to_string(rank);
      EXPECT_EQ(predicted.total_peak_bytes, actual.total_peak_bytes) << what;
      EXPECT_EQ(predicted.peak_bytes, actual.peak_bytes) << what;
    }
    const auto optimizer_states = static_cast<std::size_t>(MemoryCategory::kOptimizerStates);
    const MemorySnapshot flat_two =
        estimate::estimate_rank(tiny_config("llama", stage, 2, 1), 2, 0, options).memory;
    EXPECT_EQ(measured.memory[0].peak_bytes[optimizer_states],
              flat_two.peak_bytes[optimizer_states])
        << "stage " << stage << ": a group of 2 shards like a world of 2";
  }
}

// Every rank's refusal, as run_ranks sums them up; "" when the trainers were built.
std::string refusal(const Config& config, int world_size) {
  try {
    testing::run_trainers(world_size, config,
                          [](int, engine::Trainer&, comm::Communicator&, MemoryTracker&) {});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(HybridShardingRefusals, AGroupSizeThatDoesNotDivideTheWorldIsRefused) {
  const std::string message = refusal(tiny_config("gpt", 2, kWorld, 1, {group_key(3)}), kWorld);
  EXPECT_NE(message.find("zero.shard_group_size = 3 does not divide the world size 4"),
            std::string::npos)
      << message;
}

TEST(HybridShardingRefusals, AGroupSizeWithStageZeroIsRefusedAndTheWorldsSizeIsNot) {
  const std::string message = refusal(tiny_config("gpt", 0, kWorld, 1, {group_key(2)}), kWorld);
  EXPECT_NE(message.find("zero.shard_group_size = 2 shards inside groups of 2 ranks, and "
                         "zero.stage = 0 shards nothing"),
            std::string::npos)
      << message;
  EXPECT_EQ(refusal(tiny_config("gpt", 0, 2, 1, {group_key(2)}), 2), "");
  EXPECT_EQ(refusal(tiny_config("gpt", 2, 2, 1, {group_key(2)}), 2), "");
}

}  // namespace
}  // namespace zt
