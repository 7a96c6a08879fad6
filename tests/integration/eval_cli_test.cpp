// `zerotrain eval` as a user runs it: the validation loss of a checkpoint of the tiny GPT, alone
// and on 2 ranks under `zerotrain launch`, equals the val_loss its training run logged at its
// last step; Hugging Face weights through checkpoint.init_from evaluate too; a bad
// --checkpoint is named; run.dir is left exactly as training left it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_format.h"
#include "support/hf_gpt2_fixture.h"
#include "support/zerotrain_cli.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::TempDir;

constexpr int kSteps = 20;

// The word after "val_loss " in `text` ("" when there is none).
std::string val_loss_text(const std::string& text) {
  const std::string key = "val_loss ";
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size();
  return text.substr(begin, text.find(' ', begin) - begin);
}

// The val_loss of metrics.jsonl's last line, printed as eval prints it (%.4f).
std::string last_logged_val_loss(const fs::path& metrics) {
  const std::string text = testing::read_text(metrics);
  const std::string key = "\"val_loss\": ";
  const std::size_t at = text.rfind(key);
  if (at == std::string::npos) return "";
  char printed[32];
  std::snprintf(printed, sizeof(printed), "%.4f", std::stod(text.substr(at + key.size())));
  return printed;
}

// Every file under `dir` with its size and modification time.
std::map<std::string, std::string> listing(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    const auto size = entry.is_regular_file() ? entry.file_size() : 0;
    files[entry.path().string()] =
        std::to_string(size) + " " +
        std::to_string(entry.last_write_time().time_since_epoch().count());
  }
  return files;
}

// One training run for every test: the tiny config, one rank, val_loss at its last step.
class EvalCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const ProgramResult run =
        testing::zerotrain(*dir_,
                           {"train", testing::config_path("tiny.toml"), "--set",
                            "train.steps=" + std::to_string(kSteps), "--set", "train.eval_every=10",
                            "--set", "checkpoint.every_steps=" + std::to_string(kSteps), "--set",
                            "run.dir=" + run_dir().string()},
                           "train");
    ASSERT_EQ(run.exit_code, 0) << run.output();
    checkpoint_ = run_dir() / "checkpoints" / checkpoint::step_directory_name(kSteps);
    ASSERT_TRUE(fs::exists(checkpoint_ / "manifest.toml")) << run.output();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path run_dir() { return dir_->path() / "run"; }

  // `zerotrain eval tiny.toml --set run.dir=<the run> ARGS...`, after `launch -- ` with `ranks`
  // > 1.
  static ProgramResult eval(const std::vector<std::string>& args, int ranks,
                            const std::string& name) {
    std::vector<std::string> all;
    if (ranks > 1) {
      all = {"launch", "--nproc-per-node", std::to_string(ranks), "--",
             testing::zerotrain_binary()};
    }
    const std::vector<std::string> eval_args = {"eval",  testing::config_path("tiny.toml"),
                                                "--set", "run.dir=" + run_dir().string(),
                                                "--set", "runtime.comm_timeout_s=30"};
    all.insert(all.end(), eval_args.begin(), eval_args.end());
    all.insert(all.end(), args.begin(), args.end());
    return testing::zerotrain(*dir_, all, name);
  }

  static TempDir* dir_;
  static fs::path checkpoint_;
};

TempDir* EvalCli::dir_ = nullptr;
fs::path EvalCli::checkpoint_;

TEST_F(EvalCli, OneAndTwoRanksPrintTheValLossTrainingLoggedAndLeaveRunDirAlone) {
  const auto before = listing(run_dir());
  const std::string logged = last_logged_val_loss(run_dir() / "metrics.jsonl");
  ASSERT_FALSE(logged.empty());

  const ProgramResult alone = eval({"--checkpoint", checkpoint_.string()}, 1, "eval1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output();
  EXPECT_NE(alone.out.find("zerotrain: val_loss " + logged + " over 64 windows (2048 tokens)"),
            std::string::npos)
      << "logged " << logged << "\n"
      << alone.output();

  // Two ranks, the checkpoint.dir given (its newest checkpoint), zero.stage 3 resharding it.
  const ProgramResult two = eval(
      {"--checkpoint", (run_dir() / "checkpoints").string(), "--set", "zero.stage=3"}, 2, "eval2");
  ASSERT_EQ(two.exit_code, 0) << two.output();
  EXPECT_EQ(val_loss_text(two.out), logged) << two.output();
  EXPECT_EQ(testing::count_of(two.out, "val_loss"), 1u) << two.output();  // rank 0 only

  EXPECT_EQ(listing(run_dir()), before);
}

// 3 ranks do not divide the checkpoint's global batch of 8, set here as the config's: eval
// needs only the checkpoint's weights. A run.dir that does not exist is not created.
TEST_F(EvalCli, ThreeRanksEvaluateACheckpointOfAnotherGlobalBatchWithoutMakingRunDir) {
  const fs::path fresh = dir_->path() / "fresh-run";
  const ProgramResult three =
      eval({"--checkpoint", checkpoint_.string(), "--set", "run.dir=" + fresh.string(), "--set",
            "zero.stage=2", "--set", "train.global_batch_size=8"},
           3, "eval3");
  ASSERT_EQ(three.exit_code, 0) << three.output();
  EXPECT_EQ(val_loss_text(three.out), last_logged_val_loss(run_dir() / "metrics.jsonl"))
      << three.output();
  EXPECT_FALSE(fs::exists(fresh));
}

TEST_F(EvalCli, AMissingCheckpointIsNamed) {
  const std::string missing = (dir_->path() / "no-such-checkpoint").string();
  const ProgramResult result = eval({"--checkpoint", missing}, 1, "missing");
  EXPECT_EQ(result.exit_code, 1) << result.output();
  EXPECT_NE(result.err.find("zerotrain: error: checkpoint '" + missing + "' does not exist"),
            std::string::npos)
      << result.output();
  EXPECT_EQ(result.out.find("val_loss"), std::string::npos) << result.output();
}

TEST_F(EvalCli, WithoutWeightsItSaysWhatToPass) {
  const ProgramResult result = eval({}, 1, "no_weights");
  EXPECT_EQ(result.exit_code, 2) << result.output();
  EXPECT_NE(result.err.find("--checkpoint PATH"), std::string::npos) << result.output();
  EXPECT_NE(result.err.find("checkpoint.init_from"), std::string::npos) << result.output();
}

// The Hugging Face GPT-2 fixture's weights (checkpoint.init_from, no --checkpoint) on 1 and on
// 2 ranks: the line's shape, a positive loss, and the same val_loss at both world sizes.
TEST_F(EvalCli, HuggingFaceWeightsThroughInitFromEvaluateAtAnyWorldSize) {
  const std::vector<std::string> hf = {
      "--set", "model.d_model=16",
      "--set", "model.n_head=2",
      "--set", "model.vocab_size=16",
      "--set", "model.seq_len=8",
      "--set", "model.tie_embeddings=true",
      "--set", "checkpoint.init_from=" + testing::hf_gpt2_fixture("tied").string()};
  const ProgramResult alone = eval(hf, 1, "hf1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output();
  EXPECT_NE(alone.out.find(" over 64 windows (512 tokens)"), std::string::npos) << alone.output();
  const std::string loss = val_loss_text(alone.out);
  ASSERT_FALSE(loss.empty()) << alone.output();
  EXPECT_GT(std::stod(loss), 0.0);

  const ProgramResult two = eval(hf, 2, "hf2");
  ASSERT_EQ(two.exit_code, 0) << two.output();
  EXPECT_EQ(val_loss_text(two.out), loss) << two.output();
}

}  // namespace
}  // namespace zt
