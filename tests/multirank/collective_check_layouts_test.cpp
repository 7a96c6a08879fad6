// comm.check_collectives over the layouts that split the world or change what moves (Note [The
// collective check] in comm/collective_check.h): hpZ pairs, HSDP groups, qwZ + qgZ with hpZ on
// two nodes of two, and stage 3 with the optimizer and the parameters offloaded. With "step"
// and "every" the ranks agree at every op of every communicator (their splits too) and train
// bit for bit as without the check.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/collective_check.h"
#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

struct CheckedRun {
  std::vector<double> losses;     // rank 0's
  std::vector<float> parameters;  // rank 0's export
  bool ranks_agree = true;        // every rank exported the same parameters
};

// Trains `config` on `world` ranks as threads over Gloo, placed on nodes of `ranks_per_node`,
// every communicator checked in `mode` (the trainer ends each step with the check).
CheckedRun train_checked(const Config& config, int world, int ranks_per_node,
                         comm::CollectiveCheckMode mode) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<std::vector<float>> exports(static_cast<std::size_t>(world));
  CheckedRun run;
  testing::run_ranks(world, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto check = std::make_shared<comm::CollectiveCheck>(mode, &tracker);
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    options.collective_check = check;
    auto comm = comm::create_cpu_communicator(store, rank, world, options);
    comm->place_ranks(comm::Topology::blocks(world, ranks_per_node).nodes_by_rank());
    engine::TrainerOptions trainer_options = engine::quiet_trainer_options();
    trainer_options.end_of_step = [&check] { check->end_step(); };
    engine::Trainer trainer(config, *comm, tracker, trainer_options);
    const engine::TrainResult result = trainer.run();
    exports[static_cast<std::size_t>(rank)] = trainer.strategy().full_parameters();
    if (rank == 0) run.losses = result.losses;
    comm->barrier()->wait();
  });
  run.parameters = exports[0];
  for (const auto& other : exports) run.ranks_agree = run.ranks_agree && other == exports[0];
  return run;
}

Config layout_config(int world, const std::vector<std::string>& keys) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(), {"train.steps=3", "zero.stage=3", "optimizer.type=adamw",
                                     "train.global_batch_size=8",
                                     "train.micro_batch_size=" + std::to_string(8 / world)});
  overrides.insert(overrides.end(), keys.begin(), keys.end());
  return parse_config_text("", "collective_check_layouts_test.toml", overrides);
}

void expect_checked_runs_match_unchecked(int world, int ranks_per_node,
                                         const std::vector<std::string>& keys,
                                         const std::string& what) {
  const Config config = layout_config(world, keys);
  const CheckedRun off =
      train_checked(config, world, ranks_per_node, comm::CollectiveCheckMode::kOff);
  ASSERT_EQ(off.losses.size(), 3u) << what;
  for (const auto mode : {comm::CollectiveCheckMode::kStep, comm::CollectiveCheckMode::kEvery}) {
    const std::string label =
        what + (mode == comm::CollectiveCheckMode::kStep ? " (step)" : " (every)");
    const CheckedRun checked = train_checked(config, world, ranks_per_node, mode);
    EXPECT_EQ(checked.losses, off.losses) << label;
    EXPECT_EQ(checked.parameters, off.parameters) << label;
    EXPECT_TRUE(checked.ranks_agree) << label;
  }
}

TEST(CollectiveCheckLayouts, HpzPairsTrainAsUnchecked) {
  expect_checked_runs_match_unchecked(4, 2, {"zero.hpz_partition_size=2"}, "hpZ");
}

TEST(CollectiveCheckLayouts, HybridShardingGroupsTrainAsUnchecked) {
  expect_checked_runs_match_unchecked(4, 2, {"zero.shard_group_size=2"}, "HSDP");
}

TEST(CollectiveCheckLayouts, QuantizedWeightsAndGradientsWithHpzTrainAsUnchecked) {
  expect_checked_runs_match_unchecked(
      4, 2,
      {"zero.hpz_partition_size=2", "zero.quantized_weights=true", "zero.quantized_gradients=true"},
      "qwZ + qgZ + hpZ");
}

TEST(CollectiveCheckLayouts, OffloadedOptimizerAndParametersTrainAsUnchecked) {
  expect_checked_runs_match_unchecked(2, 2, {"offload.optimizer=cpu", "offload.params=cpu"},
                                      "offload");
}

}  // namespace
}  // namespace zt
