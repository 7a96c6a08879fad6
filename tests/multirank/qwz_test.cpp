// qwZ (zero.quantized_weights, Note [Quantized weight gathers] in sharding/quantized_gather.h):
// stage 3 at world 4 with int8 parameter all-gathers trains GPT and Llama to within 1% of the
// exact run's final loss over 300 steps, and with hpZ bit for bit as without it; every rank
// computes with the same weights; the all-gathers carry about a quarter of fp32's bytes, as
// the estimator predicts rank by rank, whose peak memory is every rank's; and qwZ outside
// stage 3 is refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "rank_training.h"
#include "runtime/estimate/memory_estimator.h"
#include "tiny_gpt_overrides.h"
#include "two_node_bytes.h"

namespace zt {
namespace {

constexpr std::int64_t kGlobalBatch = 16;
constexpr int kWorld = 4;
const std::string kQuantized = "zero.quantized_weights=true";
const std::string kHpzPairs = "zero.hpz_partition_size=2";

Config tiny_config(const std::string& model, int steps, std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides =
      model == "llama" ? testing::tiny_llama_overrides() : testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"train.steps=" + std::to_string(steps), "zero.stage=3",
       "train.micro_batch_size=" + std::to_string(kGlobalBatch / kWorld), "optimizer.type=adamw"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "qwz_test.toml", overrides);
}

class QuantizedWeightsConvergence : public ::testing::TestWithParam<std::string> {};

// The bar: the mean of the last 20 of 300 steps' losses within 1% of the exact run's,
// same data and seed. The weights really are quantized (the losses are not the exact run's),
// and the ranks still agree on every parameter (their masters are exact and updated alike).
// Buckets as large as a block keep 300 steps on 4 rank threads quick on a loaded machine
// (the tiny models' 1 KiB buckets make each step hundreds of small collectives); blocks of
// 64 elements give every slice several quantization blocks and a short tail.
TEST_P(QuantizedWeightsConvergence, FinalLossWithinOnePercentOfTheExactRun) {
  const std::string model = GetParam();
  constexpr int kSteps = 300;
  std::vector<std::string> keys{"zero.reduce_bucket_size=1MiB", "zero.quantization_block=64"};
  const testing::TrainingOutcome exact =
      testing::train_on_ranks(kWorld, tiny_config(model, kSteps, keys));
  keys.push_back(kQuantized);
  const testing::TrainingOutcome quantized =
      testing::train_on_ranks(kWorld, tiny_config(model, kSteps, keys));
  ASSERT_EQ(quantized.losses.size(), static_cast<std::size_t>(kSteps));
  EXPECT_NE(quantized.losses, exact.losses) << "the gathers were not quantized";
  EXPECT_TRUE(quantized.ranks_agree);
  const double exact_final = testing::mean_of_last(exact.losses, 20);
  const double quantized_final = testing::mean_of_last(quantized.losses, 20);
  // In the XML report (--gtest_output=xml), for the record.
  RecordProperty("exact_final_loss", std::to_string(exact_final));
  RecordProperty("quantized_final_loss", std::to_string(quantized_final));
  ASSERT_LT(exact_final, 0.8 * exact.losses.front()) << model << " learns";
  EXPECT_NEAR(quantized_final, exact_final, 0.01 * exact_final)
      << model << ": " << quantized_final << " vs " << exact_final;
}

INSTANTIATE_TEST_SUITE_P(Models, QuantizedWeightsConvergence,
                         ::testing::Values(std::string("gpt"), std::string("llama")));

// With hpZ the backward's gathers copy the secondary shard, which holds the dequantized values
// of the forward's quantized gather; without it the backward quantizes the same exact shard
// again, deterministically. Either way every gather of a step sees the same weights, so hpZ
// changes nothing: qwZ with and without it train bit for bit alike (and so converge alike).
TEST(QuantizedWeightsWithHpz, TrainBitForBitLikeQuantizedWeightsAlone) {
  for (const std::string& model : {std::string("gpt"), std::string("llama")}) {
    const std::vector<std::string> keys{kQuantized, "zero.quantization_block=64"};
    const testing::TrainingOutcome alone =
        testing::train_on_ranks(kWorld, tiny_config(model, 30, keys));
    const testing::TrainingOutcome with_hpz =
        testing::train_on_ranks(kWorld, tiny_config(model, 30, {keys[0], keys[1], kHpzPairs}));
    EXPECT_EQ(with_hpz.losses, alone.losses) << model;
    EXPECT_EQ(with_hpz.parameters, alone.parameters) << model;
  }
}

using testing::run_on_two_nodes;
using testing::RunBytes;

// fp32 parameters, blocks of 2048: a slice of n elements sends n int8 bytes (padded to a word)
// and one f32 scale per 2048, so the gathers carry a little over 1/4 of fp32's bytes (slices of
// the tiny models are short, so the words' padding and the scales add up to a few percent).
// The estimator replays the same messages: each rank's bytes a step, intra and cross node.
TEST(QuantizedWeightsTraffic, GathersCarryAQuarterOfFp32AndTheEstimatorAgrees) {
  const std::vector<std::string> keys{"zero.param_persistence_threshold=0"};
  const Config exact_config = tiny_config("gpt", 12, keys);
  const Config quantized_config = tiny_config("gpt", 12, {keys[0], kQuantized});
  const std::vector<RunBytes> exact = run_on_two_nodes(exact_config);
  const std::vector<RunBytes> quantized = run_on_two_nodes(quantized_config);
  estimate::EstimateOptions two_per_node;
  two_per_node.ranks_per_node = 2;
  for (int rank = 0; rank < kWorld; ++rank) {
    const auto index = static_cast<std::size_t>(rank);
    const std::string what = "rank " + std::to_string(rank);
    const double ratio = static_cast<double>(quantized[index].all_gather) /
                         static_cast<double>(exact[index].all_gather);
    EXPECT_GT(ratio, 0.25) << what;
    EXPECT_LT(ratio, 0.30) << what;
    const estimate::RankEstimate estimated =
        estimate::estimate_rank(quantized_config, kWorld, rank, two_per_node);
    EXPECT_EQ(estimated.cross_node_bytes_per_step, quantized[index].median_step_cross_node) << what;
    EXPECT_EQ(estimated.intra_node_bytes_per_step, quantized[index].median_step_intra_node) << what;
  }
}

// The quantization buffers are communication buffers while a gather is in flight; the
// estimator's replay allocates the same ones, so its peak is every rank's, byte for byte.
TEST(QuantizedWeightsMemory, TheEstimatorPeakIsEveryRanks) {
  estimate::EstimateOptions options;
  options.count_comm_scratch = false;  // the in-process communicators count none
  for (const std::string& model : {std::string("gpt"), std::string("llama")}) {
    const Config config = tiny_config(model, 4, {kQuantized, kHpzPairs});
    const testing::TrainingOutcome run = testing::train_on_ranks(kWorld, config);
    for (int rank = 0; rank < kWorld; ++rank) {
      const auto index = static_cast<std::size_t>(rank);
      const MemorySnapshot predicted =
          estimate::estimate_rank(config, kWorld, rank, options).memory;
      EXPECT_EQ(predicted.total_peak_bytes, run.memory[index].total_peak_bytes)
          << model << ", rank " << rank;
      EXPECT_EQ(predicted.peak_bytes, run.memory[index].peak_bytes) << model << ", rank " << rank;
    }
  }
}

TEST(QuantizedWeightsRefusals, OutsideStageThreeIsRefusedNamingTheKey) {
  std::string message;
  try {
    testing::run_trainers(kWorld, tiny_config("gpt", 2, {"zero.stage=2", kQuantized}),
                          [](int, engine::Trainer&, comm::Communicator&, MemoryTracker&) {});
  } catch (const std::exception& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("zero.quantized_weights = true quantizes stage 3's parameter "
                         "all-gathers, and zero.stage = 2"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace zt
