// Training the tiny GPT on other projects' token files through the config: a glob of llm.c
// shards, nanoGPT files with data.format = "nanogpt", and the errors a config can cause.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "data/llmc_token_file.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"
#include "support/foreign_token_files.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

using zt::testing::TempDir;

Config gpt_config(std::vector<std::string> extra) {
  std::vector<std::string> overrides{
      "model.type=gpt",       "model.n_layer=1",  "model.n_head=2", "model.d_model=16",
      "model.vocab_size=300", "model.seq_len=16", "train.steps=3",  "train.micro_batch_size=4"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "tokens_test.toml", overrides);
}

std::vector<std::uint32_t> tokens(std::size_t count, std::uint32_t seed) {
  std::vector<std::uint32_t> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<std::uint32_t>((i * 31 + seed) % 300);
  return out;
}

TrainResult train(const Config& config) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  const auto comm = comm::create_cpu_communicator(store, 0, 1);
  Trainer trainer(config, *comm, tracker, quiet_trainer_options());
  return trainer.run();
}

TEST(TokenCorpusTraining, TrainsOnAGlobOfLlmcShardsAndNanogptFiles) {
  TempDir dir;
  zt::testing::write_llmc_file(dir / "fineweb_train_000001.bin", tokens(400, 1),
                               data::kLlmcMagicU16, 1, 2);
  zt::testing::write_llmc_file(dir / "fineweb_train_000002.bin", tokens(400, 2),
                               data::kLlmcMagicU32, 7, 4);
  const TrainResult llmc =
      train(gpt_config({"data.path=" + (dir / "fineweb_train_*.bin").string()}));
  ASSERT_EQ(llmc.losses.size(), 3u);
  EXPECT_GT(llmc.losses.front(), 0.0);

  zt::testing::write_nanogpt_file(dir / "train.bin", tokens(400, 3));
  const TrainResult nanogpt = train(
      gpt_config({"data.path=[\"" + (dir / "train.bin").string() + "\"]", "data.format=nanogpt"}));
  ASSERT_EQ(nanogpt.losses.size(), 3u);
}

TEST(TokenCorpusTraining, AGlobMatchingNothingNamesThePattern) {
  TempDir dir;
  const std::string pattern = (dir / "missing_*.bin").string();
  try {
    train(gpt_config({"data.path=" + pattern}));
    ADD_FAILURE() << "accepted a pattern that matches nothing";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + pattern + "' matches no file"), std::string::npos)
        << e.what();
  }
}

TEST(TokenCorpusTraining, AnIdPastModelVocabSizeIsRefusedWithTheFileAndOffset) {
  TempDir dir;
  std::vector<std::uint32_t> bad(400, 5);
  bad[200] = 300;  // model.vocab_size is 300
  zt::testing::write_llmc_file(dir / "bad.bin", bad, data::kLlmcMagicU16, 1, 2);
  // Every window of 17 tokens among 400 is drawn within a few hundred samples.
  try {
    train(gpt_config({"data.path=" + (dir / "bad.bin").string(), "train.steps=40",
                      "train.micro_batch_size=16"}));
    ADD_FAILURE() << "trained on an id past the vocabulary";
  } catch (const FormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((dir / "bad.bin").string()), std::string::npos) << message;
    EXPECT_NE(message.find("token 300 at byte offset 1424"), std::string::npos) << message;
  }
}

// model.data_vocab_size = 290 in a model of 300 rows: id 295 is a row of the model but no
// token of the data (Note [Padded vocabulary]), refused as an id past model.vocab_size is.
TEST(TokenCorpusTraining, AnIdPastModelDataVocabSizeIsRefusedWithTheFileAndOffset) {
  TempDir dir;
  std::vector<std::uint32_t> bad(400, 5);
  bad[200] = 295;
  zt::testing::write_llmc_file(dir / "bad.bin", bad, data::kLlmcMagicU16, 1, 2);
  try {
    train(gpt_config({"data.path=" + (dir / "bad.bin").string(), "model.data_vocab_size=290",
                      "train.steps=40", "train.micro_batch_size=16"}));
    ADD_FAILURE() << "trained on an id past the data's vocabulary";
  } catch (const FormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((dir / "bad.bin").string()), std::string::npos) << message;
    EXPECT_NE(message.find("token 295 at byte offset 1424 is outside the vocabulary of 290"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace zt::engine

namespace zt::engine {
namespace {

std::string error_of(const Config& config) {
  try {
    train(config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the config was accepted";
  return {};
}

TEST(TokenCorpusValidation, ValPathAndValFractionEachGiveAValidationLoss) {
  TempDir dir;
  zt::testing::write_nanogpt_file(dir / "train.bin", tokens(400, 3));
  zt::testing::write_nanogpt_file(dir / "val.bin", tokens(200, 7));
  const std::string train_path = "data.path=" + (dir / "train.bin").string();
  for (const std::string& validation :
       {"data.val_path=" + (dir / "val*.bin").string(), std::string("data.val_fraction=0.2")}) {
    const TrainResult result =
        train(gpt_config({train_path, "data.format=nanogpt", validation, "train.eval_every=2"}));
    ASSERT_EQ(result.metrics.size(), 3u);
    EXPECT_TRUE(std::isnan(result.metrics[0].val_loss)) << validation;
    EXPECT_GT(result.metrics[1].val_loss, 0.0) << validation;
    EXPECT_GT(result.metrics[2].val_loss, 0.0) << validation;
  }
}

TEST(TokenCorpusValidation, ConflictingOrMissingValidationKeysAreNamed) {
  TempDir dir;
  zt::testing::write_nanogpt_file(dir / "train.bin", tokens(400, 3));
  const std::string train_path = "data.path=" + (dir / "train.bin").string();
  const std::string both = error_of(
      gpt_config({train_path, "data.format=nanogpt",
                  "data.val_path=" + (dir / "train.bin").string(), "data.val_fraction=0.1"}));
  EXPECT_NE(both.find("data.val_path and data.val_fraction"), std::string::npos) << both;
  const std::string none =
      error_of(gpt_config({train_path, "data.format=nanogpt", "train.eval_every=1"}));
  EXPECT_NE(none.find("train.eval_every = 1 needs validation windows"), std::string::npos) << none;
  const std::string synthetic = error_of(gpt_config({"data.val_fraction=0.1"}));
  EXPECT_NE(synthetic.find("data.path is empty"), std::string::npos) << synthetic;
}

}  // namespace
}  // namespace zt::engine
