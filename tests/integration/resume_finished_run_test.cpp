// A resume of a run that already made train.steps steps (what a scheduler's requeue of a
// finished job does) ends at once with exit 0 and says so, alone and under the launcher,
// and leaves the run's memory.json as the run that trained wrote it.
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

// `zerotrain [launch --nproc-per-node 2] train tiny.toml`, `steps` steps, saving every 2.
std::vector<std::string> tiny_args(bool launch, const fs::path& run_dir, int steps,
                                   std::vector<std::string> more = {}) {
  std::vector<std::string> args;
  if (launch) {
    args = {"launch", "--nproc-per-node", "2"};
  } else {
    args = {"train"};
  }
  const std::vector<std::string> common{testing::config_path("tiny.toml"),
                                        "--set",
                                        "train.steps=" + std::to_string(steps),
                                        "--set",
                                        "run.dir=" + run_dir.string(),
                                        "--set",
                                        "checkpoint.every_steps=2",
                                        "--set",
                                        "runtime.comm_timeout_s=30"};
  args.insert(args.end(), common.begin(), common.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string mode_name(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "Launched" : "Alone";
}

class ResumeOfFinishedRun : public ::testing::TestWithParam<bool> {};

TEST_P(ResumeOfFinishedRun, ExitsZeroSayingNothingIsLeftToTrain) {
  const bool launch = GetParam();
  const TempDir dir;
  const fs::path run_dir = dir / "run";
  const ProgramResult first = testing::zerotrain(dir, tiny_args(launch, run_dir, 4), "first");
  ASSERT_EQ(first.exit_code, 0) << first.output();
  const std::string memory_json = testing::read_text(run_dir / "memory.json");
  ASSERT_NE(memory_json.find("\"total\": {\"after_step_1_bytes\": "), std::string::npos)
      << memory_json;
  ASSERT_EQ(memory_json.find("\"total\": {\"after_step_1_bytes\": 0,"), std::string::npos)
      << memory_json;
  for (const int steps : {4, 2}) {  // at train.steps, and past it
    const ProgramResult again = testing::zerotrain(
        dir, tiny_args(launch, run_dir, steps, {"--set", "checkpoint.resume=latest"}),
        "again-" + std::to_string(steps));
    EXPECT_EQ(again.exit_code, 0) << again.output();
    EXPECT_NE(again.out.find("nothing left to train: the checkpoint is at step 4 and "
                             "train.steps = " +
                             std::to_string(steps)),
              std::string::npos)
        << again.output();
    EXPECT_EQ(again.out.find("done: loss"), std::string::npos) << again.output();
    // No step, no figures of its own: the trained run's memory.json, byte for byte.
    EXPECT_EQ(testing::read_text(run_dir / "memory.json"), memory_json) << again.output();
  }
}

INSTANTIATE_TEST_SUITE_P(AloneAndLaunched, ResumeOfFinishedRun, ::testing::Values(false, true),
                         mode_name);

}  // namespace
}  // namespace zt
