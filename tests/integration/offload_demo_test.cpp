// configs/offload-demo.toml as README shows it: at zero.stage = 3 on 2 ranks under its
// 64 MiB device limit it runs out of memory naming what was live, and with
// offload.optimizer = "cpu" it trains, to the losses of a run without the limit, with no
// optimizer state on the device and the offloaded bytes in memory.json; offload.params
// = "cpu" trains under a smaller limit still.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_paths.h"
#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

std::string demo_config() { return zt::testing::source_dir() + "/configs/offload-demo.toml"; }

CommandResult launch_demo(const TempDir& dir, std::vector<std::string> settings) {
  std::vector<std::string> argv = {
      zerotrain_exe(), "launch", "--nproc-per-node",        "2", demo_config(), "--set",
      "train.steps=6", "--set",  "run.dir=" + (dir / "run")};
  for (std::string& setting : settings) {
    argv.push_back("--set");
    argv.push_back(std::move(setting));
  }
  return run_command(argv, dir, {}, 120s);
}

TEST(OffloadDemo, StageThreeRunsOutOfDeviceMemoryListingWhatWasLive) {
  TempDir dir;
  const CommandResult result = launch_demo(dir, {});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.err.find("out of memory on cpu:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("device capacity of 64 MiB (runtime.device_memory_limit)"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("in use: parameters 12.1 MiB, gradients 12.1 MiB, optimizer_states "
                            "24.2 MiB"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("largest live allocations:"), std::string::npos) << result.err;
}

TEST(OffloadDemo, OptimizerOffloadTrainsUnderTheLimitToTheUnlimitedLosses) {
  TempDir offloaded_dir;
  const CommandResult offloaded = launch_demo(offloaded_dir, {"offload.optimizer=cpu"});
  ASSERT_EQ(offloaded.exit_code, 0) << offloaded.err;
  TempDir unlimited_dir;
  const CommandResult unlimited = launch_demo(unlimited_dir, {"runtime.device_memory_limit=0"});
  ASSERT_EQ(unlimited.exit_code, 0) << unlimited.err;

  const std::vector<std::string> losses = losses_of(offloaded_dir / "run/metrics.jsonl");
  ASSERT_EQ(losses.size(), 6u);
  // Printed to round-trip digits: equal on this CPU up to the vector path's round-off,
  // compared here at 6 significant digits.
  const std::vector<std::string> expected = losses_of(unlimited_dir / "run/metrics.jsonl");
  ASSERT_EQ(expected.size(), 6u);
  for (std::size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(std::stod(losses[i]), std::stod(expected[i]), 1e-6 * std::stod(expected[i]))
        << "step " << i + 1;
  }
  EXPECT_NE(offloaded.out.find("optimizer_states 0 B"), std::string::npos) << offloaded.out;
  const std::string memory = read_file(offloaded_dir / "run/memory.json");
  const std::size_t host = memory.find("\"host_offload\": {\"after_step_1_bytes\": ");
  ASSERT_NE(host, std::string::npos) << memory;
  EXPECT_NE(memory.compare(host, 45, "\"host_offload\": {\"after_step_1_bytes\": 0,"), 0)
      << "the offloaded states are counted: " << memory;
}

// Under a still smaller limit optimizer offload alone runs out, and moving stage 3's
// parameter shard to the host as well trains.
TEST(OffloadDemo, ParameterOffloadTrainsUnderASmallerLimitThanOptimizerOffloadAlone) {
  TempDir optimizer_dir;
  const CommandResult optimizer_only =
      launch_demo(optimizer_dir, {"offload.optimizer=cpu", "runtime.device_memory_limit=44MiB"});
  EXPECT_EQ(optimizer_only.exit_code, 1) << optimizer_only.err;
  EXPECT_NE(optimizer_only.err.find("out of memory on cpu:"), std::string::npos)
      << optimizer_only.err;
  TempDir both_dir;
  const CommandResult both = launch_demo(both_dir, {"offload.optimizer=cpu", "offload.params=cpu",
                                                    "runtime.device_memory_limit=44MiB"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("peaks: parameters 0 B"), std::string::npos) << both.out;
  EXPECT_EQ(losses_of(both_dir / "run/metrics.jsonl").size(), 6u);
}

}  // namespace
}  // namespace zt::launch::testing
