// Validation (train.eval_every) on ranks as threads: evaluating changes no training result
// bit for bit and raises no rank's memory peak (stages 0 and 3), reports val_loss on the
// steps that evaluate only, every split of the batch over ranks, micro-batches and
// accumulation measures the same val_loss, and a run resumed from a checkpoint measures the
// same val_loss as the run that never stopped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "rank_training.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/engine/trainer.h"
#include "support/temp_dir.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int kWorld = 2;
constexpr int kSteps = 5;

Config config_for(int stage, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_run_overrides(stage, kSteps);
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "validation_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;
  std::vector<double> val_losses;  // per step; NaN where it did not evaluate
  std::vector<float> parameters;
  std::vector<std::int64_t> peak_bytes;  // per rank
};

Outcome train(const Config& config) {
  testing::TrainingOutcome trained = testing::train_on_ranks(kWorld, config);
  Outcome outcome;
  outcome.losses = std::move(trained.losses);
  outcome.parameters = std::move(trained.parameters);
  for (const MemorySnapshot& memory : trained.memory) {
    outcome.peak_bytes.push_back(memory.total_peak_bytes);
  }
  for (const auto& m : trained.metrics[0]) outcome.val_losses.push_back(m.val_loss);
  return outcome;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

class Validation : public ::testing::TestWithParam<int> {};

TEST_P(Validation, EvaluatingChangesNoTrainingResultAndNoPeak) {
  const int stage = GetParam();
  const Outcome plain = train(config_for(stage, {}));
  const Outcome evaluated =
      train(config_for(stage, {"train.eval_every=2", "train.eval_windows=7"}));
  ASSERT_EQ(plain.losses.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(evaluated.losses.size(), plain.losses.size());
  for (std::size_t i = 0; i < plain.losses.size(); ++i) {
    EXPECT_TRUE(same_bits(plain.losses[i], evaluated.losses[i]))
        << "stage " << stage << " step " << i + 1;
    EXPECT_TRUE(std::isnan(plain.val_losses[i])) << "step " << i + 1;
  }
  ASSERT_EQ(plain.parameters.size(), evaluated.parameters.size());
  EXPECT_EQ(std::memcmp(plain.parameters.data(), evaluated.parameters.data(),
                        plain.parameters.size() * sizeof(float)),
            0)
      << "stage " << stage << ": final weights differ";
  // Note [Evaluation memory]: a forward that keeps nothing stays below training's.
  EXPECT_EQ(evaluated.peak_bytes, plain.peak_bytes) << "stage " << stage;

  // Steps 2 and 4 (eval_every) and 5 (the last) evaluate; the others do not.
  for (int step = 1; step <= kSteps; ++step) {
    const double v = evaluated.val_losses[static_cast<std::size_t>(step - 1)];
    if (step % 2 == 0 || step == kSteps) {
      EXPECT_TRUE(std::isfinite(v) && v > 0) << "step " << step << ": " << v;
    } else {
      EXPECT_TRUE(std::isnan(v)) << "step " << step << ": " << v;
    }
  }
  // The same windows each time: the loss moves with the weights, which training changes.
  EXPECT_NE(evaluated.val_losses[1], evaluated.val_losses[3]);
}

INSTANTIATE_TEST_SUITE_P(Stages, Validation, ::testing::Values(0, 3), [](const auto& param_info) {
  return "Stage" + std::to_string(param_info.param);
});

TEST(Validation, StagesAgreeOnTheValidationLoss) {
  const std::vector<std::string> eval = {"train.eval_every=5"};
  const double ddp = train(config_for(0, eval)).val_losses.back();
  const double stage3 = train(config_for(3, eval)).val_losses.back();
  EXPECT_NEAR(ddp, stage3, 1e-5 * std::abs(ddp));
}

// One split of a job's batch: world size, micro-batch size, accumulation and stage.
struct Split {
  int world;
  int micro_batch_size;
  int grad_accum_steps;
  int stage;
};

// Every rank's validation loss before any step (the same initial weights at every split),
// from a fresh trainer of the tiny GPT split as `split` says.
std::vector<double> initial_validation_losses(const Split& split,
                                              const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=1", "train.eval_every=1",
                    "train.micro_batch_size=" + std::to_string(split.micro_batch_size),
                    "train.grad_accum_steps=" + std::to_string(split.grad_accum_steps),
                    "zero.stage=" + std::to_string(split.stage), "zero.prefetch_blocks=1",
                    "zero.param_persistence_threshold=0"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  const Config config = parse_config_text("", "validation_split_test.toml", overrides);
  std::vector<double> losses(static_cast<std::size_t>(split.world));
  testing::run_trainers(
      split.world, config,
      [&](int rank, engine::Trainer& trainer, comm::Communicator&, MemoryTracker&) {
        losses[static_cast<std::size_t>(rank)] = trainer.validation_loss();
      });
  return losses;
}

void expect_every_split_agrees(const std::vector<std::string>& windows,
                               const std::vector<Split>& splits) {
  const double reference = initial_validation_losses(splits.front(), windows).front();
  ASSERT_TRUE(std::isfinite(reference) && reference > 0) << reference;
  for (const Split& split : splits) {
    const std::vector<double> losses = initial_validation_losses(split, windows);
    for (std::size_t rank = 0; rank < losses.size(); ++rank) {
      EXPECT_NEAR(losses[rank], reference, 1e-6 * reference)
          << "world " << split.world << ", micro-batch " << split.micro_batch_size
          << " x accumulation " << split.grad_accum_steps << ", stage " << split.stage << ", rank "
          << rank;
    }
  }
}

TEST(Validation, EverySplitOfTheBatchMeasuresTheSameValidationLoss) {
  // 7 windows: shares of 4 and 3 on 2 ranks, 3, 2 and 2 on 3; short last micro-batches, and
  // ranks that run out of windows a forward before others (a stand-in at stage 3's gathers).
  expect_every_split_agrees({"train.eval_windows=7"}, {{1, 4, 1, 0},
                                                       {2, 2, 1, 0},
                                                       {2, 2, 1, 2},
                                                       {2, 1, 2, 3},
                                                       {2, 4, 1, 3},
                                                       {3, 2, 1, 3},
                                                       {3, 1, 3, 0}});
}

TEST(Validation, FewerWindowsThanRanksLeavesSomeRanksOnlyStandIns) {
  expect_every_split_agrees({"train.eval_windows=2"},
                            {{1, 4, 1, 0}, {3, 2, 1, 0}, {3, 1, 1, 3}, {4, 1, 1, 2}});
}

TEST(Validation, AResumedRunMeasuresWhatTheUninterruptedOneDid) {
  const testing::TempDir dir;
  const std::vector<std::string> eval = {"train.eval_every=2", "train.eval_windows=12"};
  std::vector<std::string> saving = eval;
  saving.insert(saving.end(),
                {"checkpoint.every_steps=2", "checkpoint.dir=" + (dir / "saved").string(),
                 "run.dir=" + (dir / "run").string()});
  const Outcome whole = train(config_for(3, saving));
  const fs::path step_2 = dir / "saved" / checkpoint::step_directory_name(2);
  ASSERT_TRUE(fs::exists(step_2 / "manifest.toml"));

  std::vector<std::string> resuming = eval;
  resuming.insert(resuming.end(), {"checkpoint.resume=" + step_2.string(),
                                   "run.dir=" + (dir / "resumed").string()});
  const Outcome resumed = train(config_for(3, resuming));
  // The resumed run made steps 3..5: it evaluated after 4 and 5, as the whole run did.
  ASSERT_EQ(resumed.val_losses.size(), 3u);
  EXPECT_TRUE(std::isnan(resumed.val_losses[0]));
  EXPECT_TRUE(same_bits(resumed.val_losses[1], whole.val_losses[3]))
      << resumed.val_losses[1] << " vs " << whole.val_losses[3];
  EXPECT_TRUE(same_bits(resumed.val_losses[2], whole.val_losses[4]))
      << resumed.val_losses[2] << " vs " << whole.val_losses[4];
}

}  // namespace
}  // namespace zt
