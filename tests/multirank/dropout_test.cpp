// model.dropout on ranks as threads: with dropout 0.1 (after the embedding, on the attention
// probabilities inside the attention kernels, and on each residual branch's output) every
// split of a global batch of 4 over ranks and micro-batches, at stages 0 and 3 and with
// activation checkpointing, trains the GPT and the Llama like one rank with one micro-batch of
// 4, within fp32 round-off (the masks follow each sample's place in the global batch, not the
// rank's); dropout 0 is the model without dropout; the validation loss is measured without
// dropout.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "data/lm_batch.h"
#include "rank_training.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

constexpr std::int64_t kGlobalBatch = 4;
constexpr int kSteps = 6;

Config dropout_config(bool llama, int stage, int world, std::int64_t accum,
                      std::vector<std::string> extra = {}) {
  std::vector<std::string> overrides =
      llama ? testing::tiny_llama_overrides() : testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=" + std::to_string(kSteps), "zero.stage=" + std::to_string(stage),
                    "train.grad_accum_steps=" + std::to_string(accum),
                    "train.micro_batch_size=" + std::to_string(kGlobalBatch / (accum * world)),
                    "optimizer.type=adamw", "model.dropout=0.1"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "dropout_test.toml", overrides);
}

void expect_losses_match(const std::vector<double>& losses, const std::vector<double>& reference,
                         const std::string& what) {
  ASSERT_EQ(losses.size(), reference.size()) << what;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    EXPECT_NEAR(losses[i], reference[i], 1e-5 * std::fabs(reference[i]))
        << what << ", step " << i + 1;
  }
}

class DropoutSplits : public ::testing::TestWithParam<bool> {};

TEST_P(DropoutSplits, EveryStageWorldAndMicroBatchSplitMatchesOneRank) {
  const bool llama = GetParam();
  const testing::TrainingOutcome single =
      testing::train_on_ranks(1, dropout_config(llama, 0, 1, 1));
  // Dropout is on: the losses are not those of the model without it.
  const testing::TrainingOutcome plain =
      testing::train_on_ranks(1, dropout_config(llama, 0, 1, 1, {"model.dropout=0"}));
  EXPECT_NE(single.losses, plain.losses);
  for (int stage : {0, 3}) {
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{},
          std::vector<std::string>{"activation_checkpointing.enabled=true"}}) {
      const std::string what = "stage " + std::to_string(stage) + (extra.empty() ? "" : " ckpt");
      expect_losses_match(
          testing::train_on_ranks(2, dropout_config(llama, stage, 2, 1, extra)).losses,
          single.losses, what + ", world 2 micro-batch 2");
      expect_losses_match(
          testing::train_on_ranks(1, dropout_config(llama, stage, 1, 2, extra)).losses,
          single.losses, what + ", world 1, 2 micro-batches of 2");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, DropoutSplits, ::testing::Bool(),
                         [](const auto& param_info) { return param_info.param ? "Llama" : "Gpt"; });

// Recomputing a checkpointed block draws forward's masks again: the same bits.
TEST(Dropout, ActivationCheckpointingGivesBitIdenticalLosses) {
  for (int stage : {0, 3}) {
    const testing::TrainingOutcome kept =
        testing::train_on_ranks(2, dropout_config(false, stage, 2, 1));
    const testing::TrainingOutcome recomputed = testing::train_on_ranks(
        2, dropout_config(false, stage, 2, 1, {"activation_checkpointing.enabled=true"}));
    EXPECT_EQ(recomputed.losses, kept.losses) << "stage " << stage;
    EXPECT_EQ(recomputed.parameters, kept.parameters) << "stage " << stage;
  }
}

// model.dropout = 0 builds no Dropout module: bit for bit the run that does not set it.
TEST(Dropout, ZeroIsTheModelWithoutDropout) {
  const testing::TrainingOutcome zero =
      testing::train_on_ranks(2, dropout_config(false, 3, 2, 1, {"model.dropout=0"}));
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(), {"train.steps=" + std::to_string(kSteps), "zero.stage=3",
                                     "train.micro_batch_size=2", "optimizer.type=adamw"});
  const testing::TrainingOutcome without =
      testing::train_on_ranks(2, parse_config_text("", "no_dropout.toml", overrides));
  EXPECT_EQ(zero.losses, without.losses);
  EXPECT_EQ(zero.parameters, without.parameters);
}

// Evaluation runs without masks: the same parameters give the same validation loss whatever
// model.dropout is, while a training step's loss differs.
TEST(Dropout, TheValidationLossIsMeasuredWithoutIt) {
  for (bool llama : {false, true}) {
    std::vector<double> evaluated;
    std::vector<double> trained;
    for (const char* p : {"model.dropout=0", "model.dropout=0.5"}) {
      const Config config = dropout_config(llama, 0, 1, 1, {p});
      testing::run_trainers(
          1, config,
          [&](int, engine::Trainer& trainer, comm::Communicator&, MemoryTracker& tracker) {
            const auto source = data::make_markov_source(
                99, static_cast<std::int32_t>(config.model.vocab_size), config.model.seq_len);
            const data::Batch batch = source->load({0, kGlobalBatch}, tracker);
            evaluated.push_back(trainer.evaluate(batch));
            trained.push_back(trainer.step(batch).loss);
          });
    }
    EXPECT_EQ(evaluated[0], evaluated[1]) << (llama ? "llama" : "gpt");
    EXPECT_NE(trained[0], trained[1]) << (llama ? "llama" : "gpt");
  }
}

}  // namespace
}  // namespace zt
