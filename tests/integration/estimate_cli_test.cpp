// `zerotrain estimate` as users run it: the report and its JSON, usage errors, a config that
// fits nowhere, a 70B-class config, and the out-of-memory advice, whose configuration is then
// run under the same limit.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

using testing::config_path;
using testing::count_of;
using testing::zerotrain;

TEST(EstimateCli, ReportsEveryRankAndTheTable) {
  testing::TempDir dir;
  const auto result = zerotrain(dir, {"estimate", config_path("tiny.toml"), "--world", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.output();
  for (const char* category : {"parameters", "gradients", "optimizer_states", "activations",
                               "comm_buffers", "workspace", "host_offload"}) {
    EXPECT_NE(result.out.find(category), std::string::npos) << category;
  }
  EXPECT_NE(result.out.find("stage 3, optimizer+params"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("world 64"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Set runtime.device_memory_limit"), std::string::npos);
}

TEST(EstimateCli, JsonHasRanksTableAndCheapest) {
  testing::TempDir dir;
  const auto result =
      zerotrain(dir, {"estimate", config_path("offload-demo.toml"), "--world", "2", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.output();
  EXPECT_NE(result.out.find("\"format\": \"zerotrain-estimate/1\""), std::string::npos);
  EXPECT_EQ(count_of(result.out, "{\"rank\": "), 2u) << result.out;
  // Worlds 1..64 (7) x (stage 0, 1, 1+opt, 2, 2+opt, 3, 3+opt, 3+opt+params) + cheapest, smallest.
  EXPECT_EQ(count_of(result.out, "{\"stage\": "), 7u * 8u + 2u) << result.out;
  EXPECT_NE(result.out.find("\"cheapest\": {\"stage\": "), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("\"cheapest\": null"), std::string::npos);
}

TEST(EstimateCli, BadWorldIsAUsageError) {
  testing::TempDir dir;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--world", "0"},
                                               {"--world", "two"},
                                               {"--world=-3"},
                                               {"--world"}}) {
    std::vector<std::string> argv = {"estimate", config_path("tiny.toml")};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = zerotrain(dir, argv);
    EXPECT_EQ(result.exit_code, 2) << result.output();
    EXPECT_NE(result.err.find("--world"), std::string::npos) << result.err;
  }
}

// What training would refuse on the device estimated for, the estimate refuses alike
// (exit 2, the key named) instead of printing a table for a run that could never start.
TEST(EstimateCli, RefusesWhatTrainingOnThatDeviceWouldRefuse) {
  testing::TempDir dir;
  const std::vector<std::vector<std::string>> refused = {
      {"runtime.device=cuda", "precision.dtype=fp16"},
      {"runtime.attention=cudnn"},
      {"comm.backend=nccl"}};
  for (const std::vector<std::string>& sets : refused) {
    std::vector<std::string> argv = {"estimate", config_path("tiny.toml")};
    for (const std::string& set : sets) argv.insert(argv.end(), {"--set", set});
    const auto result = zerotrain(dir, argv);
    EXPECT_EQ(result.exit_code, 2) << sets.back() << "\n" << result.output();
    EXPECT_NE(result.err.find(sets.back().substr(0, sets.back().find('='))), std::string::npos)
        << result.output();
    EXPECT_EQ(result.out.find("Per rank"), std::string::npos) << result.output();
  }
  const auto bf16 = zerotrain(dir, {"estimate", config_path("tiny.toml"), "--set",
                                    "runtime.device=cuda", "--set", "precision.dtype=bf16"});
  EXPECT_EQ(bf16.exit_code, 0) << bf16.output();
}

TEST(EstimateCli, NothingFitsSaysTheSmallestRequirement) {
  testing::TempDir dir;
  const auto result = zerotrain(
      dir, {"estimate", config_path("tiny.toml"), "--set", "runtime.device_memory_limit=64KiB"});
  EXPECT_EQ(result.exit_code, 1) << result.output();
  EXPECT_NE(result.out.find("Nothing fits in 64.0 KiB up to world 64: the smallest requirement is"),
            std::string::npos)
      << result.out;
}

TEST(EstimateCli, SeventyBillionClassConfigAllocatesNothing) {
  testing::TempDir dir;
  const auto result = zerotrain(dir, {"estimate", config_path("gpt-70b.toml"), "--world", "64"});
  ASSERT_EQ(result.exit_code, 0) << result.output();
  EXPECT_NE(result.out.find("64990887936 parameters"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Cheapest that fits"), std::string::npos) << result.out;
}

TEST(EstimateCli, OutOfMemoryAdviceFitsWhenRun) {
  testing::TempDir dir;
  const std::vector<std::string> base = {
      "launch", "--nproc-per-node",       "2",     config_path("offload-demo.toml"),
      "--set",  "train.steps=2",          "--set", "run.dir=" + (dir.path() / "oom").string(),
      "--set",  "offload.optimizer=none", "--set", "offload.params=none"};
  const auto failed = zerotrain(dir, base, "oom");
  ASSERT_EQ(failed.exit_code, 1) << failed.output();
  const std::string all = failed.out + failed.err;
  // "The estimator says <choice> fits: <bytes> per rank (<settings>; ..."
  const std::size_t says = all.find("The estimator says ");
  ASSERT_NE(says, std::string::npos) << all;
  const std::size_t open = all.find(" per rank (", says);
  const std::size_t close = all.find(';', open);
  ASSERT_NE(close, std::string::npos) << all;
  const std::string choice = all.substr(says, open - says);
  const std::string settings_text = all.substr(open + 11, close - open - 11);
  // Run what it advises, under the same 64 MiB limit.
  std::vector<std::string> advised = {
      "launch", "--nproc-per-node",   "2",     config_path("offload-demo.toml"),
      "--set",  "train.steps=2",      "--set", "run.dir=" + (dir.path() / "advised").string(),
      "--set",  "offload.params=none"};
  std::istringstream settings(settings_text);
  for (std::string word; settings >> word;) advised.push_back(word);
  const auto fitted = zerotrain(dir, advised, "advised");
  EXPECT_EQ(fitted.exit_code, 0) << choice << "\n" << fitted.output();
}

}  // namespace
}  // namespace zt
