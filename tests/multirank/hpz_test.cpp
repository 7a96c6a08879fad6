// hpZ (zero.hpz_partition_size, Note [The secondary shard] in sharding/secondary_shard.h):
// stage 3 at world 4 with secondary shards over pairs of ranks trains GPT and Llama like one
// rank (1e-6 relative on the fp32 losses) and bit for bit like flat stage 3 at world 4, in fp32
// and bf16, with accumulation and activation checkpointing; on two nodes of 2 the all-gathers
// after a block's first one stay inside the node; the secondary shard's bytes are counted and
// the estimator's peak is every rank's; and misplaced sizes are refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "rank_training.h"
#include "runtime/engine/supported_config.h"
#include "runtime/estimate/memory_estimator.h"
#include "tiny_gpt_overrides.h"
#include "two_node_bytes.h"

namespace zt {
namespace {

constexpr std::int64_t kGlobalBatch = 16;
constexpr int kSteps = 30;
constexpr int kWorld = 4;
const std::string kHpzPairs = "zero.hpz_partition_size=2";

Config tiny_config(const std::string& model, int world_size, std::int64_t accum,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides =
      model == "llama" ? testing::tiny_llama_overrides() : testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=" + std::to_string(kSteps), "zero.stage=3",
                    "train.grad_accum_steps=" + std::to_string(accum),
                    "train.micro_batch_size=" + std::to_string(kGlobalBatch / (accum * world_size)),
                    "optimizer.type=adamw"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "hpz_test.toml", overrides);
}

const testing::TrainingOutcome& one_rank(const std::string& model) {
  static const testing::TrainingOutcome gpt = testing::train_on_ranks(1, tiny_config("gpt", 1, 1));
  static const testing::TrainingOutcome llama =
      testing::train_on_ranks(1, tiny_config("llama", 1, 1));
  return model == "gpt" ? gpt : llama;
}

using HpzCase = std::tuple<std::string, int, std::string>;  // model, accumulation, extra key

class Hpz : public ::testing::TestWithParam<HpzCase> {};

// The secondary shard holds the compute-dtype parameters themselves, and every reduction runs
// as without it: the run is flat stage 3's, bit for bit, whatever the dtype.
TEST_P(Hpz, PairsTrainBitForBitLikeFlatStageThreeAndLikeOneRank) {
  const auto [model, accum, extra] = GetParam();
  std::vector<std::string> keys;
  if (!extra.empty()) keys.push_back(extra);
  const std::string what = model + ", accumulation " + std::to_string(accum) + " " + extra;
  const testing::TrainingOutcome flat =
      testing::train_on_ranks(kWorld, tiny_config(model, kWorld, accum, keys));
  keys.push_back(kHpzPairs);
  const testing::TrainingOutcome hpz =
      testing::train_on_ranks(kWorld, tiny_config(model, kWorld, accum, keys));
  ASSERT_EQ(hpz.losses.size(), static_cast<std::size_t>(kSteps)) << what;
  EXPECT_EQ(hpz.losses, flat.losses) << what;
  EXPECT_EQ(hpz.parameters, flat.parameters) << what;
  EXPECT_TRUE(hpz.ranks_agree) << what;
  if (extra.find("bf16") != std::string::npos) return;  // bf16's losses are not one rank's fp32
  const testing::TrainingOutcome& single = one_rank(model);
  ASSERT_LT(single.losses.back(), single.losses.front()) << model << " learns";
  for (std::size_t i = 0; i < single.losses.size(); ++i) {
    EXPECT_NEAR(hpz.losses[i], single.losses[i], 1e-6 * std::fabs(single.losses[i]))
        << what << ", step " << i + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(
    ModelsAccumulationOptions, Hpz,
    ::testing::Values(HpzCase{"gpt", 1, ""}, HpzCase{"gpt", 2, ""}, HpzCase{"llama", 1, ""},
                      HpzCase{"llama", 2, ""}, HpzCase{"gpt", 2, "precision.dtype=bf16"},
                      HpzCase{"llama", 1, "activation_checkpointing.enabled=true"},
                      HpzCase{"gpt", 1, "zero.prefetch_blocks=2"}),
    [](const auto& param_info) {
      const std::string& extra = std::get<2>(param_info.param);
      std::string name =
          std::get<0>(param_info.param) + "Accum" + std::to_string(std::get<1>(param_info.param));
      if (extra.find("bf16") != std::string::npos) name += "Bf16";
      if (extra.find("checkpointing") != std::string::npos) name += "Checkpointing";
      if (extra.find("prefetch") != std::string::npos) name += "PrefetchTwo";
      return name;
    });

using testing::run_on_two_nodes;
using testing::RunBytes;

// Flat stage 3 gathers every block across the world twice a step, F bytes in forward and B in
// backward; with hpZ the forward's F are the same, and the backward re-gathers the same
// blocks inside the pair, (1/2)/(3/4) = 2/3 of B. So B = 3 x (flat - hpZ all-gather bytes).
// On nodes {0, 1} and {2, 3} every ring sends to the next rank, so ranks 1 and 3 send all of
// their world traffic across nodes: hpZ takes exactly B off theirs, and its pair gathers are
// all inside the node (ranks 0 and 2, whose neighbours are on their node, send nothing
// across either way).
TEST(HpzTraffic, BackwardGathersStayInsideTheNode) {
  const Config flat_config = tiny_config("gpt", kWorld, 1, {"zero.param_persistence_threshold=0"});
  const Config hpz_config =
      tiny_config("gpt", kWorld, 1, {"zero.param_persistence_threshold=0", kHpzPairs});
  const std::vector<RunBytes> flat = run_on_two_nodes(flat_config);
  const std::vector<RunBytes> hpz = run_on_two_nodes(hpz_config);
  for (std::size_t rank = 0; rank < kWorld; ++rank) {
    const std::string what = "rank " + std::to_string(rank);
    ASSERT_GT(flat[rank].all_gather, hpz[rank].all_gather) << what;
    const std::uint64_t backward = 3 * (flat[rank].all_gather - hpz[rank].all_gather);
    ASSERT_LT(backward, flat[rank].all_gather) << what << ": the forward gathers too";
    if (rank % 2 == 1) {
      EXPECT_EQ(hpz[rank].cross_node, flat[rank].cross_node - backward) << what;
      EXPECT_EQ(hpz[rank].intra_node, 2 * backward / 3) << what;
      EXPECT_EQ(flat[rank].intra_node, 0u) << what;
    } else {
      EXPECT_EQ(hpz[rank].cross_node, 0u) << what;
      EXPECT_EQ(flat[rank].cross_node, 0u) << what;
    }
  }
  // The estimator replays hpZ's split groups on the same two nodes: a step's bytes, rank by
  // rank, exactly.
  estimate::EstimateOptions two_per_node;
  two_per_node.ranks_per_node = 2;
  for (int rank = 0; rank < kWorld; ++rank) {
    const estimate::RankEstimate estimated =
        estimate::estimate_rank(hpz_config, kWorld, rank, two_per_node);
    const RunBytes& measured = hpz[static_cast<std::size_t>(rank)];
    EXPECT_EQ(estimated.cross_node_bytes_per_step, measured.median_step_cross_node)
        << "rank " << rank;
    EXPECT_EQ(estimated.intra_node_bytes_per_step, measured.median_step_intra_node)
        << "rank " << rank;
  }
}

// The secondary shard is standing parameter memory: with nothing persistent, a rank of 4
// keeps 1/4 of the padded parameters as its shard and 1/2 more as its secondary shard, three
// times flat stage 3's parameters; the estimator's peak is every rank's, byte for byte.
TEST(HpzMemory, TheSecondaryShardIsCountedAndEstimated) {
  estimate::EstimateOptions options;
  options.count_comm_scratch = false;  // the in-process communicators count none
  const std::vector<std::string> keys{"zero.param_persistence_threshold=0"};
  const Config flat_config = tiny_config("llama", kWorld, 1, keys);
  const Config hpz_config = tiny_config("llama", kWorld, 1, {keys[0], kHpzPairs});
  const testing::TrainingOutcome flat = testing::train_on_ranks(kWorld, flat_config);
  const testing::TrainingOutcome hpz = testing::train_on_ranks(kWorld, hpz_config);
  const auto parameters = static_cast<std::size_t>(MemoryCategory::kParameters);
  for (int rank = 0; rank < kWorld; ++rank) {
    const auto index = static_cast<std::size_t>(rank);
    const std::string what = "rank " + std::to_string(rank);
    EXPECT_EQ(hpz.memory[index].peak_bytes[parameters],
              3 * flat.memory[index].peak_bytes[parameters])
        << what;
    const MemorySnapshot predicted =
        estimate::estimate_rank(hpz_config, kWorld, rank, options).memory;
    EXPECT_EQ(predicted.total_peak_bytes, hpz.memory[index].total_peak_bytes) << what;
    EXPECT_EQ(predicted.peak_bytes, hpz.memory[index].peak_bytes) << what;
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

TEST(HpzRefusals, APartitionOutsideStageThreeIsRefused) {
  const std::string message =
      refusal(tiny_config("gpt", kWorld, 1, {"zero.stage=2", kHpzPairs}), kWorld);
  EXPECT_NE(message.find("zero.hpz_partition_size = 2 keeps a secondary copy of stage 3's "
                         "parameter shards, and zero.stage = 2"),
            std::string::npos)
      << message;
}

TEST(HpzRefusals, APartitionThatDoesNotDivideTheShardGroupIsRefused) {
  std::string message =
      refusal(tiny_config("gpt", kWorld, 1, {"zero.hpz_partition_size=3"}), kWorld);
  EXPECT_NE(message.find("zero.hpz_partition_size = 3 does not divide the world size 4"),
            std::string::npos)
      << message;
  message = refusal(
      tiny_config("gpt", kWorld, 1, {"zero.hpz_partition_size=4", "zero.shard_group_size=2"}),
      kWorld);
  EXPECT_NE(message.find("zero.hpz_partition_size = 4 does not divide zero.shard_group_size = 2"),
            std::string::npos)
      << message;
  // 0 and 1 keep no secondary shard; the shard group's own size keeps nothing twice.
  for (const char* none :
       {"zero.hpz_partition_size=0", "zero.hpz_partition_size=1", "zero.hpz_partition_size=4"}) {
    EXPECT_EQ(refusal(tiny_config("gpt", kWorld, 1, {none}), kWorld), "") << none;
  }
}

TEST(HpzRefusals, NodesOfUnequalSizeAreRefusedForEveryGrouping) {
  const comm::Topology unequal = comm::Topology::blocks(6, 4);  // nodes of 4 and 2 ranks
  const comm::Topology equal = comm::Topology::blocks(6, 3);
  const Config hpz = tiny_config(
      "gpt", 6, 1, {kHpzPairs, "train.global_batch_size=12", "train.micro_batch_size=2"});
  const Config hybrid = tiny_config(
      "gpt", 6, 1,
      {"zero.shard_group_size=3", "train.global_batch_size=12", "train.micro_batch_size=2"});
  const auto message = [](const Config& config, const comm::Topology& topology) -> std::string {
    try {
      engine::check_groups_fit_nodes(config, topology);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(hpz, unequal)
                .find("zero.hpz_partition_size = 2 groups contiguous ranks the "
                      "way nodes hold them, and this job runs on 2 nodes of 4, "
                      "2 ranks"),
            std::string::npos)
      << message(hpz, unequal);
  EXPECT_NE(message(hybrid, unequal).find("zero.shard_group_size = 3 groups contiguous ranks"),
            std::string::npos)
      << message(hybrid, unequal);
  EXPECT_EQ(message(hpz, equal), "");
  EXPECT_EQ(message(hybrid, equal), "");
  EXPECT_EQ(
      message(tiny_config("gpt", 6, 1, {"train.global_batch_size=12", "train.micro_batch_size=2"}),
              unequal),
      "")
      << "flat stage 3 groups nothing by node";
}

}  // namespace
}  // namespace zt
