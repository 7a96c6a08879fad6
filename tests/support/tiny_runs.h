// What the tests of real runs share: the tiny config's command line for `zerotrain train`, and
// the reference run of the same config under `zerotrain launch --nproc-per-node 2`.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/test_paths.h"

namespace zt::testing {

inline constexpr int kEngineTestSteps = 20;

// `zerotrain train configs/tiny.toml` for kEngineTestSteps steps into run_dir.
inline std::vector<std::string> tiny_train_command(const std::filesystem::path& run_dir) {
  return {zt::testing::zerotrain_binary(),
          "train",
          zt::testing::source_dir() + "/configs/tiny.toml",
          "--set",
          "train.steps=" + std::to_string(kEngineTestSteps),
          "--set",
          "run.dir=" + run_dir.string(),
          "--set",
          "runtime.comm_timeout_s=30"};
}

// The per-step numbers of the tiny config trained by `zerotrain launch` on 2 ranks.
inline std::vector<std::string> losses_under_launch(const std::filesystem::path& dir) {
  std::vector<std::string> command = tiny_train_command(dir / "launch-run");
  command.erase(command.begin() + 1);  // "train"
  command.insert(command.begin() + 1, {"launch", "--nproc-per-node", "2"});
  const ProgramResult launch = run_program(command, dir, "launch");
  EXPECT_EQ(launch.exit_code, 0) << launch.output();
  std::vector<std::string> steps = step_numbers(dir / "launch-run/metrics.jsonl");
  EXPECT_EQ(steps.size(), static_cast<std::size_t>(kEngineTestSteps)) << launch.output();
  for (const std::string& step : steps) {
    // "3.4793539 0.000199999995 4.22173521": three numbers, or the comparison means nothing.
    EXPECT_EQ(step.find("(no "), std::string::npos) << step;
    EXPECT_GT(std::atof(step.c_str()), 0.0) << step;
  }
  return steps;
}

}  // namespace zt::testing
