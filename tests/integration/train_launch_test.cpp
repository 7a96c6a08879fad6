// Real training processes through the launcher: two CPU ranks train and agree; a rank that
// exits or is killed mid-run brings the job down quickly with a message naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "launch_harness.h"
#include "support/test_paths.h"

namespace zt::launch::testing {
namespace {

LaunchOptions train_ranks(int nproc, const TempDir& dir, std::vector<std::string> overrides) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.grace_period = std::chrono::milliseconds(2000);
  options.rank_command = {zt::testing::zerotrain_binary(),
                          "train",
                          zt::testing::source_dir() + "/configs/tiny.toml",
                          "--set",
                          "run.dir=" + (dir / "run"),
                          "--set",
                          "runtime.comm_timeout_s=20"};
  for (auto& text : overrides) {
    options.rank_command.push_back("--set");
    options.rank_command.push_back(std::move(text));
  }
  return options;
}

int count_lines(const std::string& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(TrainThroughLauncher, TwoRanksTrainAndRankZeroWritesEveryStep) {
  TempDir dir;
  const LaunchResult result = launch(train_ranks(2, dir, {"train.steps=30"}), dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 0] zerotrain: done: loss"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("2 ranks"), std::string::npos) << result.out;
  EXPECT_EQ(count_lines(dir / "run/metrics.jsonl"), 30);
  // memory.json: a header line, one line per rank, the closing line.
  EXPECT_EQ(count_lines(dir / "run/memory.json"), 4);
  EXPECT_NE(result.out.find("/memory.json"), std::string::npos) << result.out;
}

TEST(TrainThroughLauncher, RankExitingWithStatus3AtStep2StopsTheJobNamingIt) {
  TempDir dir;
  const LaunchResult result = launch(train_ranks(2, dir, {"train.steps=100000"}), dir,
                                     {{"ZEROTRAIN_FAULT", "rank=1,step=2,exit=3"}});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_LT(result.elapsed, std::chrono::seconds(10));
  EXPECT_NE(result.err.find("rank 1"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("status 3"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("injected fault"), std::string::npos) << "stderr tail missing:\n"
                                                                  << result.err;
}

TEST(TrainThroughLauncher, RankKilledBySigkillStopsTheJobNamingIt) {
  TempDir dir;
  const LaunchResult result = launch(train_ranks(2, dir, {"train.steps=100000"}), dir,
                                     {{"ZEROTRAIN_FAULT", "rank=1,step=2,signal=9"}});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_LT(result.elapsed, std::chrono::seconds(10));
  EXPECT_NE(result.err.find("rank 1"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("signal 9"), std::string::npos) << result.err;
}

TEST(TrainThroughLauncher, ConfigErrorInRanksIsReportedWithTheKey) {
  TempDir dir;
  const LaunchResult result = launch(train_ranks(2, dir, {"optimizer.lr=-1"}), dir);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("optimizer.lr"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace zt::launch::testing
