// The samples as users run them: built in-tree against libzerotrain, started at 2 ranks with
// ZeRO stage 3 by `zerotrain launch --nproc-per-node 2 -- SAMPLE ...`, each must train (its
// loss falls) and write its run.dir; custom_format's bad files are named in its errors.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

// The values after `prefix` (e.g. "[rank 0] step ") and " loss " on the lines of `out`.
std::vector<double> losses_after(const std::string& out, const std::string& prefix) {
  std::vector<double> losses;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const std::size_t at = line.find(" loss ");
    if (at != std::string::npos) losses.push_back(std::stod(line.substr(at + 6)));
  }
  return losses;
}

// Runs `sample_argv` at 2 ranks under the launcher, with ZeRO stage 3 and run.dir in `dir`.
CommandResult launch_sample(std::vector<std::string> sample_argv, const TempDir& dir) {
  std::vector<std::string> argv = {zerotrain_exe(), "launch", "--nproc-per-node", "2", "--"};
  argv.insert(argv.end(), sample_argv.begin(), sample_argv.end());
  for (const std::string& setting :
       std::vector<std::string>{"zero.stage=3", "run.dir=" + (dir / "run")}) {
    argv.push_back("--set");
    argv.push_back(setting);
  }
  return run_command(argv, dir, {}, 60s);
}

// The run wrote its config (with stage 3) and one metrics line per step.
void expect_run_dir(const TempDir& dir, std::size_t steps) {
  EXPECT_NE(read_file(dir / "run/config.toml").find("stage = 3"), std::string::npos);
  EXPECT_EQ(losses_of(dir / "run/metrics.jsonl").size(), steps);
  EXPECT_FALSE(read_file(dir / "run/memory.json").empty());
}

TEST(Samples, MinimalTrainsAt2RanksStage3) {
  TempDir dir;
  const CommandResult result = launch_sample({ZT_SAMPLE_MINIMAL}, dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<double> losses = losses_after(result.out, "[rank 0] step ");
  ASSERT_EQ(losses.size(), 5u) << result.out;  // every 20 of 100 steps
  // From about ln 10 = 2.3 on the synthetic task.
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << result.out;
  expect_run_dir(dir, 100);
}

TEST(Samples, CustomMlpLearnsTheNoisyLinearRegressionAt2RanksStage3) {
  TempDir dir;
  const CommandResult result =
      launch_sample({ZT_SAMPLE_CUSTOM_MLP, "--set", "train.steps=30"}, dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<double> losses = losses_after(result.out, "[rank 0] step ");
  ASSERT_EQ(losses.size(), 30u) << result.out;
  // The targets' variance is about Σ w_j² ≈ 6; the noise floor is 0.05² = 0.0025.
  EXPECT_LT(losses.back(), 0.25 * losses.front()) << result.out;
  EXPECT_NE(result.out.find("[rank 0] done: "), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("[rank 1] step "), std::string::npos) << "only rank 0 logs";
  expect_run_dir(dir, 30);
}

TEST(Samples, GptTextLearnsATokenFileWithItsOwnLoopAndEvaluates) {
  TempDir dir;
  {
    std::ofstream text(dir / "text.txt");
    for (int i = 0; i < 400; ++i) {
      text << "the ranks each hold a shard of every parameter; line " << i % 7 << " of many.\n";
    }
  }
  const CommandResult prepared =
      run_command({zerotrain_exe(), "prepare-data", dir / "text.txt", dir / "text.bin"}, dir);
  ASSERT_EQ(prepared.exit_code, 0) << prepared.err;

  const CommandResult result =
      launch_sample({ZT_SAMPLE_GPT_TEXT, dir / "text.bin", "--eval-every", "10", "--set",
                     "train.steps=20", "--set", "optimizer.lr=0.01"},
                    dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<double> losses = losses_after(result.out, "[rank 0] step ");
  ASSERT_EQ(losses.size(), 20u) << result.out;
  EXPECT_LT(losses.back(), losses.front() - 1.0) << result.out;  // from about ln 256 = 5.5
  const std::vector<double> evals = losses_after(result.out, "[rank 0] eval step ");
  ASSERT_EQ(evals.size(), 2u) << result.out;  // at steps 10 and 20
  EXPECT_LT(evals[1], evals[0]) << result.out;
  EXPECT_LT(evals[1], losses.front() - 1.0) << result.out;
  expect_run_dir(dir, 20);
}

TEST(Samples, CustomFormatWritesItsFileAndLearnsItAt2RanksStage3) {
  TempDir dir;
  const CommandResult written =
      run_command({ZT_SAMPLE_CUSTOM_FORMAT, "--write", dir / "records.bin", "256"}, dir);
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_NE(written.out.find("wrote 256 records"), std::string::npos) << written.out;

  const CommandResult result =
      launch_sample({ZT_SAMPLE_CUSTOM_FORMAT, dir / "records.bin", "--set", "train.steps=40"}, dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<double> losses = losses_after(result.out, "[rank 0] step ");
  ASSERT_EQ(losses.size(), 40u) << result.out;
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << result.out;  // from about ln 4 = 1.39
  expect_run_dir(dir, 40);
}

TEST(Samples, CustomFormatNamesAFileWithTheWrongMagic) {
  TempDir dir;
  {
    std::ofstream file(dir / "notes.bin");
    file << "these are somebody's notes, not records\n";
  }
  const CommandResult result = run_command({ZT_SAMPLE_CUSTOM_FORMAT, dir / "notes.bin"}, dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("custom_format: error: record file '" + (dir / "notes.bin") +
                            "' does not start with the magic \"ZTRECS01\""),
            std::string::npos)
      << result.err;
}

TEST(Samples, CustomFormatNamesATruncatedFileAndItsSizes) {
  TempDir dir;
  ASSERT_EQ(
      run_command({ZT_SAMPLE_CUSTOM_FORMAT, "--write", dir / "records.bin", "10"}, dir).exit_code,
      0);
  const std::string whole = read_file(dir / "records.bin");
  ASSERT_EQ(whole.size(), 24u + 10u * 36u);
  {
    std::ofstream cut(dir / "cut.bin", std::ios::binary);
    cut << whole.substr(0, whole.size() - 5);
  }
  // Every rank refuses it before joining the job; the launcher reports the first.
  const CommandResult result = launch_sample({ZT_SAMPLE_CUSTOM_FORMAT, dir / "cut.bin"}, dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("record file '" + (dir / "cut.bin") +
                            "' is truncated: its header promises 10 records of 36 bytes after "
                            "the 24-byte header, but the file has 379 bytes"),
            std::string::npos)
      << result.err;
}

TEST(Samples, GptTextNamesATokenFileItCannotRead) {
  TempDir dir;
  const CommandResult result = run_command({ZT_SAMPLE_GPT_TEXT, dir / "missing.bin"}, dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("gpt_text: error: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(dir / "missing.bin"), std::string::npos) << result.err;
}

TEST(Samples, AConfigMistakeInTheOverridesIsAConfigErrorNamingTheKey) {
  TempDir dir;
  const CommandResult result = run_command({ZT_SAMPLE_CUSTOM_MLP, "--set", "optimizer.lr=-1"}, dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("custom_mlp: error: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("optimizer.lr"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace zt::launch::testing
