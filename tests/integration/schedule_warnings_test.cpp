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

TEST(ScheduleWarnings, ResumeUnderAnotherTrainStepsIsSaidOnceNamingBothValues) {
  const TempDir dir;
  const ProgramResult first = testing::zerotrain(
      dir, launch_args(dir / "run", 4, {"--set", "scheduler.warmup_steps=2"}), "first");
  ASSERT_EQ(first.exit_code, 0) << first.output();
  const std::vector<std::string> resume{"--set", "scheduler.warmup_steps=2", "--set",
                                        "checkpoint.resume=latest"};
  const ProgramResult more = testing::zerotrain(dir, launch_args(dir / "run", 8, resume), "more");
  ASSERT_EQ(more.exit_code, 0) << more.output();
  EXPECT_EQ(
      testing::count_of(more.err, "train.steps = 8, but the checkpoint's run had train.steps = 4"),
      1u)
      << more.output();
  // The step-6 checkpoint was saved by the 8-step run: resuming it with 8 says nothing.
  const std::vector<std::string> from_six{
      "--set", "scheduler.warmup_steps=2", "--set",
      "checkpoint.resume=" + (dir / "run/checkpoints/step-00000006").string()};
  const ProgramResult same = testing::zerotrain(dir, launch_args(dir / "run", 8, from_six), "same");
  ASSERT_EQ(same.exit_code, 0) << same.output();
  EXPECT_NE(same.err.find("resumed from"), std::string::npos) << same.output();
  EXPECT_EQ(same.err.find("checkpoint's run had"), std::string::npos) << same.output();
}

}  // namespace
}  // namespace zt
