// What a step reports: samples/s for the MLP (its samples are not tokens), tokens/s for the
// GPT, and a skipped fp16 step says so instead of showing a NaN gradient norm.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "runtime/engine/metrics_log.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/progress_line.h"
#include "runtime/engine/trainer.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

StepMetrics step_metrics() {
  StepMetrics m;
  m.step = 7;
  m.loss = 1.25;
  m.grad_norm = 0.5;
  m.samples_per_s = 1200;
  m.tokens_per_s = 38400;
  m.step_ms = 10;
  m.loss_scale = 65536;
  return m;
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "text: " << (text)
#define EXPECT_LACKS(text, part) \
  EXPECT_EQ(std::string(text).find(part), std::string::npos) << "text: " << (text)

TEST(ProgressText, TokenModelReportsTokensPerSecond) {
  const std::string text = progress_text(step_metrics(), 10, 65);
  EXPECT_CONTAINS(text, "step 7/10  loss 1.2500  grad_norm 0.500  38400 tokens/s");
  EXPECT_CONTAINS(text, "ETA 1m05s");
}

TEST(ProgressText, ModelWithoutTokensReportsSamplesPerSecond) {
  StepMetrics m = step_metrics();
  m.tokens_per_s = kNaN;
  const std::string text = progress_text(m, 10, 0);
  EXPECT_CONTAINS(text, "1200 samples/s");
  EXPECT_LACKS(text, "tokens/s");
}

TEST(ProgressText, SkippedStepSaysSoInsteadOfANanNorm) {
  StepMetrics m = step_metrics();
  m.skipped = true;
  m.grad_norm = kNaN;
  const std::string text = progress_text(m, 10, 0);
  EXPECT_CONTAINS(text, "(skipped: fp16 overflow at loss scale 65536)");
  EXPECT_LACKS(text, "nan");
  EXPECT_LACKS(text, "grad_norm");
}

TEST(MetricsLog, SkippedStepAndAbsentTokensAreExplicit) {
  const zt::testing::TempDir dir;
  StepMetrics m = step_metrics();
  m.skipped = true;
  m.grad_norm = kNaN;
  m.tokens_per_s = kNaN;
  {
    MetricsLog log(dir / "metrics.jsonl");
    log.append(m);
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_CONTAINS(line, "\"grad_norm\": null");
  EXPECT_CONTAINS(line, "\"tokens_per_s\": null");
  EXPECT_CONTAINS(line, "\"samples_per_s\": 1200");
  EXPECT_CONTAINS(line, "\"skipped\": true");
}

// Bytes inside the node and across nodes are written apart (Note [Counting bytes by node]).
TEST(MetricsLog, BytesInsideAndAcrossNodesAreWrittenApart) {
  const zt::testing::TempDir dir;
  StepMetrics m = step_metrics();
  m.all_reduce_bytes = 0;
  m.reduce_scatter_bytes = 3000;
  m.all_gather_bytes = 2000;
  m.all_to_all_bytes = 500;
  m.intra_node_bytes = 3500;
  m.cross_node_bytes = 1500;
  {
    MetricsLog log(dir / "metrics.jsonl");
    log.append(m);
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_CONTAINS(line, "\"intra_node_bytes\": 3500");
  EXPECT_CONTAINS(line, "\"cross_node_bytes\": 1500");
  EXPECT_CONTAINS(line, "\"reduce_scatter_bytes\": 3000");
  EXPECT_CONTAINS(line, "\"all_to_all_bytes\": 500");
}

// A step that sampled carries the text and its prompt (a prefix of it), so that a reader
// splits off what the model wrote; other steps carry neither.
TEST(MetricsLog, ASampleCarriesItsPrompt) {
  const zt::testing::TempDir dir;
  StepMetrics sampled = step_metrics();
  sampled.step = 8;
  sampled.sample = "Once upon a time";
  sampled.sample_prompt = "Once upon";
  {
    MetricsLog log(dir / "metrics.jsonl");
    log.append(step_metrics());
    log.append(sampled);
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string plain;
  std::string with_sample;
  std::getline(in, plain);
  std::getline(in, with_sample);
  EXPECT_LACKS(plain, "sample\"");
  EXPECT_TRUE(with_sample.ends_with(
      ", \"sample\": \"Once upon a time\", \"sample_prompt\": \"Once upon\"}"))
      << with_sample;
}

TEST(ProgressText, AStepThatEvaluatedShowsItsValidationLoss) {
  StepMetrics m = step_metrics();
  EXPECT_LACKS(progress_text(m, 10, 0), "val_loss");
  m.val_loss = 2.5;
  EXPECT_CONTAINS(progress_text(m, 10, 0), "step 7/10  loss 1.2500  val_loss 2.5000  grad_norm");
}

// Only steps that evaluated carry val_loss, last, so lines of runs without evaluation are
// unchanged.
TEST(MetricsLog, ValLossOnlyOnStepsThatEvaluated) {
  const zt::testing::TempDir dir;
  StepMetrics evaluated = step_metrics();
  evaluated.step = 8;
  evaluated.val_loss = 2.5;
  {
    MetricsLog log(dir / "metrics.jsonl");
    log.append(step_metrics());
    log.append(evaluated);
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string plain;
  std::string with_val;
  std::getline(in, plain);
  std::getline(in, with_val);
  EXPECT_LACKS(plain, "val_loss");
  EXPECT_TRUE(with_val.ends_with(", \"val_loss\": 2.5}")) << with_val;
}

TEST(TrainerMetrics, MlpHasSamplesPerSecondAndNoTokensPerSecond) {
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  const Config config =
      parse_config_text("", "test.toml",
                        {"model.input_dim=8", "model.hidden_dim=8", "model.num_classes=2",
                         "train.micro_batch_size=4", "train.steps=2"});
  const TrainResult result = Trainer(config, *comm, tracker, quiet_trainer_options()).run();
  for (const StepMetrics& m : result.metrics) {
    EXPECT_TRUE(std::isnan(m.tokens_per_s)) << m.tokens_per_s;
    EXPECT_GT(m.samples_per_s, 0);
  }
}

// Note [Held-out synthetic stream]: the MLP's synthetic task validates on samples from
// 2^62 on, which training never reads, and every evaluation reads the same ones.
TEST(TrainerMetrics, SyntheticDataValidatesOnItsHeldOutStream) {
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  auto comm = comm::create_cpu_communicator(store, 0, 1);
  const Config config =
      parse_config_text("", "test.toml",
                        {"model.input_dim=8", "model.hidden_dim=8", "model.num_classes=2",
                         "train.micro_batch_size=4", "train.steps=3", "train.eval_every=1"});
  Trainer trainer(config, *comm, tracker, quiet_trainer_options());
  const TrainResult result = trainer.run();
  ASSERT_EQ(result.metrics.size(), 3u);
  EXPECT_GT(result.metrics[0].val_loss, 0.0);
  // After the last step the weights stay: the same samples give the same loss again.
  EXPECT_EQ(trainer.validation_loss(), result.metrics[2].val_loss);
  EXPECT_EQ(trainer.validation_loss(), result.metrics[2].val_loss);
  // Validation sample i is training-stream sample 2^62 + i, not sample i.
  const auto validation = make_validation_source(config);
  const auto training = make_batch_source(config);
  const auto floats = [&](const data::BatchSource& source, std::int64_t first) {
    const data::Batch batch = source.load({first, 4}, tracker);
    const auto x = batch.inputs.span<float>();
    return std::vector<float>(x.begin(), x.end());
  };
  EXPECT_EQ(floats(*validation, 0), floats(*training, data::kHeldOutFirstSample));
  EXPECT_NE(floats(*validation, 0), floats(*training, 0));
}

}  // namespace
}  // namespace zt::engine
