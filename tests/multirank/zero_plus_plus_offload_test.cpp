// Hybrid sharding, hpZ and qgZ with the optimizer (and stage 3's parameters) offloaded to the
// host, on 2 nodes x 2 ranks as threads: each trains like the same layout with the optimizer
// on the device (1e-6 relative on the fp32 losses; the quantized layouts within their own
// rounding), every rank ends with the same parameters, the device holds no optimizer state,
// and the estimator's device peak is every rank's measured one, category by category.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "rank_training.h"
#include "runtime/estimate/memory_estimator.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr int kWorld = 4;
constexpr int kRanksPerNode = 2;
constexpr int kSteps = 5;

struct Case {
  std::string name;
  std::vector<std::string> layout;   // the ZeRO layout, the same with and without offload
  std::vector<std::string> offload;  // what goes to the host
  double tolerance;                  // relative, on every loss
  friend void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }
};

Config config_of(const Case& c, bool offloaded) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"train.steps=" + std::to_string(kSteps), "train.global_batch_size=8",
       "train.micro_batch_size=2", "optimizer.type=adamw", "offload.sub_group_size=1024",
       "zero.prefetch_blocks=1", "zero.param_persistence_threshold=0"});
  overrides.insert(overrides.end(), c.layout.begin(), c.layout.end());
  if (offloaded) overrides.insert(overrides.end(), c.offload.begin(), c.offload.end());
  return parse_config_text("", "zero_plus_plus_offload_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;  // rank 0's
  bool ranks_agree = true;     // every rank exported the same parameters
  // Trainer::memory_snapshot: the device tracker's, with the host tracker's offloaded states.
  std::vector<MemorySnapshot> memory = std::vector<MemorySnapshot>(kWorld);
};

Outcome train(const Config& config) {
  Outcome outcome;
  std::vector<std::vector<float>> exports(kWorld);
  testing::run_trainers(
      kWorld, config,
      [&](int rank, engine::Trainer& trainer, comm::Communicator&, MemoryTracker&) {
        const engine::TrainResult result = trainer.run();
        const auto index = static_cast<std::size_t>(rank);
        outcome.memory[index] = trainer.memory_snapshot();
        exports[index] = trainer.strategy().full_parameters();
        if (rank == 0) outcome.losses = result.losses;
      },
      kRanksPerNode);
  for (const auto& other : exports)
    outcome.ranks_agree = outcome.ranks_agree && other == exports[0];
  return outcome;
}

class ZeroPlusPlusOffload : public ::testing::TestWithParam<Case> {};

TEST_P(ZeroPlusPlusOffload, TrainsLikeTheDeviceOptimizerWithNoStateOnTheDevice) {
  const Case& c = GetParam();
  const Outcome on_device = train(config_of(c, false));
  const Config offloaded_config = config_of(c, true);
  const Outcome offloaded = train(offloaded_config);
  ASSERT_EQ(offloaded.losses.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(on_device.losses.size(), offloaded.losses.size());
  for (std::size_t i = 0; i < offloaded.losses.size(); ++i) {
    EXPECT_NEAR(offloaded.losses[i], on_device.losses[i],
                c.tolerance * std::abs(on_device.losses[i]))
        << "step " << i + 1;
  }
  EXPECT_LT(offloaded.losses.back(), offloaded.losses.front()) << "it trains";
  EXPECT_TRUE(offloaded.ranks_agree) << "every rank exports the same parameters";

  const auto optimizer_states = static_cast<std::size_t>(MemoryCategory::kOptimizerStates);
  estimate::EstimateOptions options;
  options.count_comm_scratch = false;  // the in-process communicators count none
  options.ranks_per_node = kRanksPerNode;
  for (int rank = 0; rank < kWorld; ++rank) {
    const MemorySnapshot& measured = offloaded.memory[static_cast<std::size_t>(rank)];
    EXPECT_EQ(measured.peak_bytes[optimizer_states], 0) << "rank " << rank;
    EXPECT_GT(measured.peak_bytes[static_cast<std::size_t>(MemoryCategory::kHostOffload)], 0)
        << "rank " << rank;
    const MemorySnapshot predicted =
        estimate::estimate_rank(offloaded_config, kWorld, rank, options).memory;
    EXPECT_EQ(predicted.peak_bytes, measured.peak_bytes) << "rank " << rank;
    EXPECT_EQ(predicted.total_peak_bytes, measured.total_peak_bytes) << "rank " << rank;
  }
}

const std::vector<std::string> kOptimizerOnHost = {"offload.optimizer=cpu"};
const std::vector<std::string> kStage3OnHost = {"offload.optimizer=cpu", "offload.params=cpu"};
const std::vector<std::string> kHsdp3 = {"zero.stage=3", "zero.shard_group_size=2"};
const std::vector<std::string> kHpz = {"zero.stage=3", "zero.hpz_partition_size=2"};
const std::vector<std::string> kAllThree = {"zero.stage=3", "zero.hpz_partition_size=2",
                                            "zero.quantized_weights=true",
                                            "zero.quantized_gradients=true"};
// The host's Adam and the device's differ in the last bits; quantized layouts round weights
// or gradients to a grid those bits can move across, so they get a looser bound.
constexpr double kExact = 1e-6;
constexpr double kQuantized = 1e-3;

INSTANTIATE_TEST_SUITE_P(
    Layouts, ZeroPlusPlusOffload,
    ::testing::Values(
        Case{"Hsdp2Stage2", {"zero.stage=2", "zero.shard_group_size=2"}, kOptimizerOnHost, kExact},
        Case{"Hsdp2Stage3", kHsdp3, kOptimizerOnHost, kExact},
        Case{"Hsdp2Stage3Parameters", kHsdp3, kStage3OnHost, kExact},
        Case{"Hpz2", kHpz, kOptimizerOnHost, kExact},
        Case{"Hpz2Parameters", kHpz, kStage3OnHost, kExact},
        Case{"Hsdp2Stage3Qgz",
             {"zero.stage=3", "zero.shard_group_size=2", "zero.quantized_gradients=true"},
             kOptimizerOnHost,
             kQuantized},
        Case{"Hpz2QwzQgz", kAllThree, kOptimizerOnHost, kQuantized},
        Case{"Hpz2QwzQgzParameters", kAllThree, kStage3OnHost, kQuantized}),
    [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace zt
