// What a run leaves in run.dir survives the next run, as real processes on real files: a
// resume that finds no checkpoint is refused as a new run is, and the saved config.toml
// resumes the same run from any directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int line_count(const fs::path& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

std::vector<std::string> tiny(std::vector<std::string> sets) {
  std::vector<std::string> args = {"train", testing::config_path("tiny.toml"), "--set",
                                   "runtime.comm_timeout_s=30"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  return args;
}

// The report: `train --set train.steps=6`, then `--set train.steps=3 --set
// checkpoint.resume=latest` into the same run.dir exited 0 and left 3 lines of metrics.
TEST(RunDirOutputs, ResumeLatestFindingNoCheckpointKeepsTheEarlierRunsFiles) {
  const TempDir dir;
  const ProgramResult first = testing::zerotrain(dir, tiny({"run.dir=nock", "train.steps=6"}));
  ASSERT_EQ(first.exit_code, 0) << first.output();
  const std::vector<std::string> outputs = {"metrics.jsonl", "config.toml", "memory.json"};
  std::vector<std::string> before;
  for (const std::string& output : outputs) before.push_back(file_bytes(dir / "nock" / output));
  ASSERT_EQ(line_count(dir / "nock" / "metrics.jsonl"), 6);

  const ProgramResult again = testing::zerotrain(
      dir, tiny({"run.dir=nock", "train.steps=3", "checkpoint.resume=latest"}), "again");
  EXPECT_EQ(again.exit_code, 2) << again.output();
  EXPECT_NE(again.err.find("already holds"), std::string::npos) << again.output();
  EXPECT_NE(again.err.find("run.overwrite"), std::string::npos) << again.output();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(file_bytes(dir / "nock" / outputs[i]), before[i]) << outputs[i] << " changed";
  }
}

// config.toml names checkpoint.dir absolute: rerun from another directory with resume, it
// continues the run from its checkpoint in the folder the run saved it to.
TEST(RunDirOutputs, SavedConfigResumesTheRunFromAnotherDirectory) {
  const TempDir dir;
  fs::create_directories(dir / "elsewhere");
  const ProgramResult first = testing::zerotrain(
      dir,
      tiny({"run.dir=run", "train.steps=4", "checkpoint.dir=ckpt", "checkpoint.every_steps=2"}));
  ASSERT_EQ(first.exit_code, 0) << first.output();
  ASSERT_TRUE(fs::exists(dir / "ckpt" / "step-00000004" / "manifest.toml")) << first.output();
  const std::string saved = file_bytes(dir / "run" / "config.toml");
  EXPECT_NE(saved.find((dir / "ckpt").string()), std::string::npos) << saved;

  const TempDir other;
  const ProgramResult resumed =
      testing::zerotrain(other,
                         {"train", (dir / "run" / "config.toml").string(), "--set", "train.steps=6",
                          "--set", "checkpoint.resume=latest"},
                         "resumed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output();
  EXPECT_NE(resumed.err.find("resumed from"), std::string::npos) << resumed.output();
  EXPECT_NE(resumed.err.find("step 4"), std::string::npos) << resumed.output();
  EXPECT_TRUE(fs::exists(dir / "ckpt" / "step-00000006" / "manifest.toml")) << resumed.output();
  EXPECT_FALSE(fs::exists(other / "ckpt")) << "a new checkpoint folder beside the rerun";
  EXPECT_EQ(line_count(dir / "run" / "metrics.jsonl"), 6);
}

}  // namespace
}  // namespace zt
