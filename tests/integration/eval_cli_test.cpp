// `zerotrain eval` as a user runs it: the validation loss of a checkpoint of the tiny GPT, alone
// and on 2 ranks under `zerotrain launch`, equals the val_loss its training run logged at its
// last step; Hugging Face weights through checkpoint.init_from evaluate too; a bad
// --checkpoint is named; run.dir is left exactly as training left it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_format.h"
#include "support/foreign_token_files.h"
#include "support/hf_gpt2_fixture.h"
#include "support/hf_llama_fixture.h"
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

// An .npy file of float32 values: its header's shape text ("(5, 32, 32)") and its values.
struct Npy {
  std::string shape;
  std::vector<float> values;
};

Npy read_npy(const fs::path& path) {
  const std::string bytes = testing::read_text(path);
  Npy npy;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return npy;
  const std::size_t length = static_cast<unsigned char>(bytes[8]) |
                             (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  const std::string dict = bytes.substr(10, length);
  const std::size_t open = dict.find("'shape': (");
  npy.shape = dict.substr(open + 9, dict.find(')', open) - open - 8);
  npy.values.resize((bytes.size() - 10 - length) / sizeof(float));
  std::memcpy(npy.values.data(), bytes.data() + 10 + length, npy.values.size() * sizeof(float));
  return npy;
}

// The mean over `logits`' rows (each `vocab` wide) of the softmax cross-entropy with target
// `target` everywhere.
double mean_cross_entropy(const std::vector<float>& logits, std::size_t vocab, int target) {
  double sum = 0;
  const std::size_t rows = logits.size() / vocab;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * vocab;
    double max = row[0];
    for (std::size_t v = 1; v < vocab; ++v) max = std::max<double>(max, row[v]);
    double total = 0;
    for (std::size_t v = 0; v < vocab; ++v) total += std::exp(row[v] - max);
    sum += max + std::log(total) - row[target];
  }
  return sum / static_cast<double>(rows);
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

// `eval --checkpoint` without CONFIG (the model from the checkpoint's manifest), --data naming
// a token file that holds one id only (so every target is known), --logits: the file holds
// (windows, seq_len, vocabulary) float32 logits whose mean cross-entropy is the val_loss
// printed, 2 ranks at stage 3 write the same file, no rank's part is left beside it, and an
// existing file is refused unless --overwrite.
TEST_F(EvalCli, LogitsFileHoldsTheLogitsTheLossCameFromAtAnyWorldSize) {
  constexpr int kToken = 7;
  const fs::path tokens = dir_->path() / "sevens.bin";
  testing::write_llmc_file(tokens, std::vector<std::uint32_t>(1000, kToken), 20240520, 1, 2);
  const auto eval_logits = [&](const std::string& out, int ranks,
                               const std::vector<std::string>& more) {
    std::vector<std::string> all;
    if (ranks > 1) {
      all = {"launch", "--nproc-per-node", std::to_string(ranks), "--",
             testing::zerotrain_binary()};
    }
    const std::vector<std::string> args = {"eval",
                                           "--checkpoint",
                                           checkpoint_.string(),
                                           "--data",
                                           tokens.string(),
                                           "--logits",
                                           (dir_->path() / out).string(),
                                           "--set",
                                           "train.eval_windows=5",
                                           "--set",
                                           "runtime.comm_timeout_s=30"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), more.begin(), more.end());
    return testing::zerotrain(*dir_, all, "logits_" + out);
  };
  const ProgramResult one = eval_logits("one.npy", 1, {});
  ASSERT_EQ(one.exit_code, 0) << one.output();
  EXPECT_NE(one.out.find("val_loss " + val_loss_text(one.out) + " over 5 windows (160 tokens)"),
            std::string::npos)
      << one.output();
  const Npy alone = read_npy(dir_->path() / "one.npy");
  EXPECT_EQ(alone.shape, "(5, 32, 32)");
  ASSERT_EQ(alone.values.size(), 5u * 32 * 32);
  EXPECT_NEAR(mean_cross_entropy(alone.values, 32, kToken), std::stod(val_loss_text(one.out)),
              1.5e-4);

  const ProgramResult two = eval_logits("two.npy", 2, {"--set", "zero.stage=3"});
  ASSERT_EQ(two.exit_code, 0) << two.output();
  const Npy both = read_npy(dir_->path() / "two.npy");
  EXPECT_EQ(both.shape, alone.shape);
  ASSERT_EQ(both.values.size(), alone.values.size());
  for (std::size_t i = 0; i < alone.values.size(); ++i) {
    ASSERT_NEAR(both.values[i], alone.values[i], 1e-4) << "value " << i;
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_->path())) {
    EXPECT_EQ(entry.path().string().find(".part"), std::string::npos) << entry.path();
  }

  const std::string kept = testing::read_text(dir_->path() / "two.npy");
  const ProgramResult again = eval_logits("two.npy", 1, {});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("--overwrite"), std::string::npos) << again.output();
  EXPECT_EQ(testing::read_text(dir_->path() / "two.npy"), kept);
  const ProgramResult replaced = eval_logits("two.npy", 1, {"--overwrite"});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.output();
}

// A Hugging Face folder with no CONFIG: model.* from its config.json, the weights through
// checkpoint.init_from, evaluated as that CONFIG-less model on 1 and 2 ranks.
TEST_F(EvalCli, AHuggingFaceFolderEvaluatesWithoutAConfig) {
  const std::vector<std::string> args = {"--checkpoint", testing::hf_llama_fixture().string(),
                                         "--set",        "train.eval_windows=8",
                                         "--set",        "runtime.comm_timeout_s=30"};
  std::vector<std::string> alone_args = {"eval"};
  alone_args.insert(alone_args.end(), args.begin(), args.end());
  const ProgramResult alone = testing::zerotrain(*dir_, alone_args, "hf_folder1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output();
  EXPECT_NE(alone.out.find(" over 8 windows (256 tokens)"), std::string::npos) << alone.output();
  std::vector<std::string> two_args = {"launch", "--nproc-per-node",          "2",
                                       "--",     testing::zerotrain_binary(), "eval"};
  two_args.insert(two_args.end(), args.begin(), args.end());
  const ProgramResult two = testing::zerotrain(*dir_, two_args, "hf_folder2");
  ASSERT_EQ(two.exit_code, 0) << two.output();
  EXPECT_EQ(val_loss_text(two.out), val_loss_text(alone.out)) << two.output();
}

TEST_F(EvalCli, NeitherConfigNorCheckpointSaysWhatToGive) {
  const ProgramResult result = testing::zerotrain(*dir_, {"eval"}, "nothing");
  EXPECT_EQ(result.exit_code, 2) << result.output();
  EXPECT_NE(result.err.find("--checkpoint PATH"), std::string::npos) << result.output();
}

}  // namespace
}  // namespace zt
