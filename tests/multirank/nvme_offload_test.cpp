// offload.optimizer = "nvme" (ZeRO-Infinity's optimizer offload) through the trainer, at
// every sharded stage, world 1 and 2, fp32 and bf16: the losses are bitwise those of
// offload.optimizer = "cpu" (the same CPU Adam over the same sub-groups), the host holds the
// states of at most three sub-groups instead of the shard's, and the state files are gone
// once the trainer is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 6;
constexpr std::int64_t kSubGroup = 1024;

Config gpt_config(int stage, int world, const std::string& dtype, const std::string& offload,
                  const std::string& nvme_path) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"optimizer.type=adamw", "train.steps=" + std::to_string(kSteps),
       "zero.stage=" + std::to_string(stage), "train.micro_batch_size=" + std::to_string(8 / world),
       "precision.dtype=" + dtype, "offload.optimizer=" + offload,
       "offload.sub_group_size=" + std::to_string(kSubGroup)});
  if (!nvme_path.empty()) overrides.push_back("offload.nvme_path=" + nvme_path);
  return parse_config_text("", "nvme_offload_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;
  std::int64_t host_offload_peak = 0;  // rank 0's host tracker
  std::int64_t shard_numel = 0;        // rank 0's master shard
  std::size_t files_while_training = 0;
};

std::size_t files_in(const std::string& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

Outcome train(const Config& config, int world) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  Outcome outcome;
  testing::run_ranks(world, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, world);
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    const engine::TrainResult result = trainer.run();
    comm->barrier()->wait();  // every rank's file exists until here
    if (rank == 0) {
      outcome.losses = result.losses;
      const MemoryTracker* host = trainer.strategy().host_offload_tracker();
      outcome.host_offload_peak =
          host->snapshot().peak_bytes[static_cast<std::size_t>(MemoryCategory::kHostOffload)];
      if (!config.offload.nvme_path.empty()) {
        outcome.files_while_training = files_in(config.offload.nvme_path);
      }
    }
    comm->barrier()->wait();
  });
  return outcome;
}

std::string fresh_directory(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("zt_nvme_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

class NvmeOffload : public ::testing::TestWithParam<std::tuple<int, int, std::string>> {};

TEST_P(NvmeOffload, LossesAreBitwiseCpuOffloadsWithOnlyThreeSubGroupsOfStatesInMemory) {
  const auto [stage, world, dtype] = GetParam();
  const std::string dir =
      fresh_directory("stage" + std::to_string(stage) + "world" + std::to_string(world) + dtype);
  const Outcome cpu = train(gpt_config(stage, world, dtype, "cpu", ""), world);
  const Outcome nvme = train(gpt_config(stage, world, dtype, "nvme", dir), world);
  ASSERT_EQ(nvme.losses.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(cpu.losses.size(), nvme.losses.size());
  for (std::size_t i = 0; i < cpu.losses.size(); ++i) {
    EXPECT_EQ(nvme.losses[i], cpu.losses[i]) << "step " << i + 1;  // bitwise
  }
  EXPECT_NE(cpu.losses.front(), cpu.losses.back()) << "training moved the losses";
  EXPECT_EQ(nvme.files_while_training, static_cast<std::size_t>(world)) << "one file per rank";
  EXPECT_EQ(files_in(dir), 0u) << "the state files are removed with their trainer";
  // The host had masters, gradients, the compute copy and AdamW's two states of the shard;
  // with NVMe the states are those of at most three sub-groups, each state padded to 4 KiB.
  // Rank 0's shard: the CPU-offload host bytes less the bf16 copy, over 4 f32 buffers.
  const std::int64_t per_element = 4 * 4 + (dtype == "bf16" ? 2 : 0);
  ASSERT_EQ(cpu.host_offload_peak % per_element, 0);
  const std::int64_t shard = cpu.host_offload_peak / per_element;
  const std::int64_t sub_groups = (shard + kSubGroup - 1) / kSubGroup;
  const std::int64_t in_flight = std::min<std::int64_t>(3, sub_groups) * 2 *
                                 ((std::min(kSubGroup, shard) * 4 + 4095) / 4096 * 4096);
  EXPECT_EQ(nvme.host_offload_peak, cpu.host_offload_peak - 2 * shard * 4 + in_flight)
      << shard << " elements in " << sub_groups << " sub-groups";
  EXPECT_GT(sub_groups, 3) << "the shard is larger than what is in flight";
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(StagesWorldsPrecisions, NvmeOffload,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values(1, 2),
                                            ::testing::Values("fp32", "bf16")),
                         [](const auto& param_info) {
                           return "Stage" + std::to_string(std::get<0>(param_info.param)) +
                                  "World" + std::to_string(std::get<1>(param_info.param)) +
                                  std::get<2>(param_info.param);
                         });

// A run.dir-writing trainer refuses an unusable offload.nvme_path before anything is
// written: the error names the key, where it was set, and the path.
TEST(NvmeOffloadErrors, MissingDirectoryIsRefusedAtStartNamingKeyAndPath) {
  const std::string missing = fresh_directory("errors") + "/missing";
  comm::MemoryStore store;
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  MemoryTracker tracker(Device::cpu());
  try {
    engine::Trainer trainer(gpt_config(1, 1, "fp32", "nvme", missing), *comm, tracker,
                            engine::quiet_trainer_options());
    FAIL() << "accepted a missing offload.nvme_path";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("offload.nvme_path \"" + missing + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace zt
