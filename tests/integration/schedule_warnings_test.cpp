// The learning-rate schedule's warnings as a real run prints them: once per run (rank 0),
// under `zerotrain launch --nproc-per-node 2`, naming both keys and values.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

// tiny.toml (scheduler.warmup_steps = 20, warmup_cosine) on 2 ranks, saving every 2 steps.
std::vector<std::string> launch_args(const fs::path& run_dir, int steps,
                                     std::vector<std::string> more = {}) {
  std::vector<std::string> args{"launch", "--nproc-per-node",
                                "2",      testing::config_path("tiny.toml"),
                                "--set",  "train.steps=" + std::to_string(steps),
                                "--set",  "run.dir=" + run_dir.string(),
                                "--set",  "checkpoint.every_steps=2",
                                "--set",  "runtime.comm_timeout_s=30"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(ScheduleWarnings, WarmupLongerThanTheRunIsSaidOnceNamingBothKeys) {
  const TempDir dir;
  const ProgramResult run = testing::zerotrain(dir, launch_args(dir / "run", 4), "short");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_EQ(testing::count_of(run.err, "scheduler.warmup_steps = 20 is more than train.steps = 4"),
            1u)
      << run.output();
  const ProgramResult longer = testing::zerotrain(dir, launch_args(dir / "longer", 20), "longer");
  ASSERT_EQ(longer.exit_code, 0) << longer.output();
  EXPECT_EQ(longer.err.find("scheduler.warmup_steps"), std::string::npos) << longer.output();
}

}  // namespace
}  // namespace zt
