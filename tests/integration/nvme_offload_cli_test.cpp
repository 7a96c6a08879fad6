// offload.optimizer = "nvme" as a user runs it: configs/offload-demo.toml on 2 launched
// ranks trains to offload.optimizer = "cpu"'s losses digit for digit and leaves no state
// file behind; an unusable offload.nvme_path stops the run at start (exit 2) naming the
// key and the path, before run.dir holds any output.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_paths.h"
#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

namespace fs = std::filesystem;

CommandResult launch_demo(const TempDir& dir, std::vector<std::string> settings) {
  std::vector<std::string> argv = {zerotrain_exe(),
                                   "launch",
                                   "--nproc-per-node",
                                   "2",
                                   zt::testing::source_dir() + "/configs/offload-demo.toml",
                                   "--set",
                                   "train.steps=4",
                                   "--set",
                                   "run.dir=" + (dir / "run")};
  for (std::string& setting : settings) {
    argv.push_back("--set");
    argv.push_back(std::move(setting));
  }
  return run_command(argv, dir, {}, 120s);
}

TEST(NvmeOffloadCli, TrainsToCpuOffloadsLossesAndRemovesItsStateFiles) {
  TempDir nvme_dir;
  fs::create_directories(nvme_dir / "states");
  const CommandResult nvme = launch_demo(
      nvme_dir, {"offload.optimizer=nvme", "offload.nvme_path=" + (nvme_dir / "states")});
  ASSERT_EQ(nvme.exit_code, 0) << nvme.out << nvme.err;
  TempDir cpu_dir;
  const CommandResult cpu = launch_demo(cpu_dir, {"offload.optimizer=cpu"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const std::vector<std::string> losses = losses_of(nvme_dir / "run/metrics.jsonl");
  ASSERT_EQ(losses.size(), 4u);
  EXPECT_EQ(losses, losses_of(cpu_dir / "run/metrics.jsonl")) << "round-trip digits, bitwise";
  EXPECT_NE(nvme.err.find("offload.optimizer = \"nvme\": states by "), std::string::npos)
      << nvme.err;
  EXPECT_TRUE(fs::is_empty(nvme_dir / "states")) << "each rank removed its state file";
}

TEST(NvmeOffloadCli, UnusablePathStopsAtStartNamingItBeforeAnyRunOutput) {
  TempDir dir;
  const std::string missing = (dir / "no_such_dir");
  const CommandResult result =
      launch_demo(dir, {"offload.optimizer=nvme", "offload.nvme_path=" + missing});
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find("offload.nvme_path \"" + missing + "\""), std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(dir / "run/metrics.jsonl"));
  EXPECT_FALSE(fs::exists(dir / "run/memory.json"));
}

}  // namespace
}  // namespace zt::launch::testing
