// Training the tiny GPT: the loss approaches the synthetic corpus's entropy rate, and
// activation checkpointing changes memory, not results.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "data/markov_corpus.h"
#include "data/token_file.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

Config gpt_config(std::vector<std::string> extra) {
  std::vector<std::string> overrides{"model.type=gpt",           "model.n_layer=2",
                                     "model.n_head=4",           "model.d_model=64",
                                     "model.vocab_size=32",      "model.seq_len=32",
                                     "optimizer.lr=0.004",       "scheduler.type=warmup_cosine",
                                     "scheduler.warmup_steps=20"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "gpt_test.toml", overrides);
}

struct SingleRankRun {
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  std::unique_ptr<comm::Communicator> comm = comm::create_cpu_communicator(store, 0, 1);
};

TEST(GptTraining, LossApproachesTheCorpusEntropyRate) {
  nn::cpu::set_blas_threads(1);
  const Config config = gpt_config({"train.steps=300", "train.micro_batch_size=16"});
  const double entropy = data::MarkovCorpus(static_cast<std::uint64_t>(config.run.seed), 32,
                                            config.data.synthetic_peakedness)
                             .entropy_rate_nats();
  SingleRankRun run;
  Trainer trainer(config, *run.comm, run.tracker, quiet_trainer_options());
  const TrainResult result = trainer.run();
  // The mean of the last 50 steps smooths the batch-to-batch noise of single-step losses.
  const double tail = std::accumulate(result.losses.end() - 50, result.losses.end(), 0.0) / 50.0;
  EXPECT_GT(result.losses.front(), 3.0);  // about log 32 = 3.47 at the start
  EXPECT_LT(tail, 1.05 * entropy) << "entropy " << entropy << ", last-50 mean " << tail;
  EXPECT_GT(tail, 0.9 * entropy) << "below the entropy rate: the model cannot beat the source";
}

TEST(GptTraining, ActivationCheckpointingGivesBitIdenticalParametersAndLessMemory) {
  nn::cpu::set_blas_threads(1);
  SingleRankRun plain;
  SingleRankRun checkpointed;
  Trainer a(gpt_config({"train.steps=3", "train.micro_batch_size=4"}), *plain.comm, plain.tracker,
            quiet_trainer_options());
  Trainer b(gpt_config({"train.steps=3", "train.micro_batch_size=4",
                        "activation_checkpointing.enabled=true"}),
            *checkpointed.comm, checkpointed.tracker, quiet_trainer_options());
  const TrainResult ra = a.run();
  const TrainResult rb = b.run();
  EXPECT_EQ(ra.losses, rb.losses);
  EXPECT_EQ(a.strategy().full_parameters(), b.strategy().full_parameters());
  EXPECT_LT(checkpointed.tracker.peak_bytes(MemoryCategory::kActivations),
            plain.tracker.peak_bytes(MemoryCategory::kActivations));
}

TEST(GptTraining, TokenFileVocabularyLargerThanTheModelIsAConfigError) {
  SingleRankRun run;
  const auto dir = std::filesystem::temp_directory_path() / "zt_gpt_vocab_test";
  std::filesystem::create_directories(dir);
  const auto text = dir / "in.txt";
  {
    std::ofstream out(text);
    out << "hello zerotrain, hello world";
  }
  const std::string bin = (dir / "tokens.bin").string();
  // 256-token byte vocabulary against a 64-token model.
  std::vector<std::int32_t> tokens(100, 65);
  data::write_token_file(bin, tokens, 256);
  try {
    Trainer trainer(gpt_config({"data.path=" + bin}), *run.comm, run.tracker,
                    quiet_trainer_options());
    ADD_FAILURE() << "accepted a token file whose vocabulary exceeds model.vocab_size";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.vocab_size"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// A token file whose vocabulary is past model.vocab_size's maximum gets advice the key can
// follow (re-create the file), not "set model.vocab_size >= N" for an N it refuses; the
// message starts where model.vocab_size was set.
TEST(GptTraining, VocabularyPastTheKeysMaximumAdvisesANewTokenFile) {
  SingleRankRun run;
  const zt::testing::TempDir dir;
  const std::string bin = (dir / "tokens.bin").string();
  data::write_token_file(bin, std::vector<std::int32_t>{1, 2, 3}, 1u << 25);
  try {
    Trainer trainer(gpt_config({"data.path=" + bin}), *run.comm, run.tracker,
                    quiet_trainer_options());
    ADD_FAILURE() << "accepted a token file whose vocabulary exceeds model.vocab_size";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("--set model.vocab_size=32: ", 0), 0u) << message;
    EXPECT_NE(message.find("at most 16777216"), std::string::npos) << message;
    EXPECT_NE(message.find("re-create the token file"), std::string::npos) << message;
    EXPECT_EQ(message.find(">= 33554432"), std::string::npos) << message;
  }
}

// A shape error from --set names the override, not the config file.
TEST(GptTraining, HeadCountErrorFromSetNamesTheOverride) {
  SingleRankRun run;
  try {
    Trainer trainer(gpt_config({"model.n_head=3"}), *run.comm, run.tracker,
                    quiet_trainer_options());
    ADD_FAILURE() << "accepted d_model 64 with 3 heads";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("--set model.n_head=3: model.d_model = 64 must be divisible", 0), 0u)
        << message;
  }
}

}  // namespace
}  // namespace zt::engine
