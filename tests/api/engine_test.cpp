// The public API at one rank (no rank variables in the environment): a user's model, batch
// source and loss train through Engine::train, Engine::step and Engine::evaluate, and bad
// input is an exception naming what is wrong. Only <zerotrain/...> headers are used, as a
// library user would.
#include <gtest/gtest.h>
#include <zerotrain/zerotrain.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace {

using zerotrain::Batch;
using zerotrain::DType;
using zerotrain::MemoryCategory;
using zerotrain::MemoryTracker;
using zerotrain::SampleRange;
using zerotrain::Shape;
using zerotrain::Tensor;

constexpr std::int64_t kFeatures = 6;

// y = Σ_j (j + 1)/features · x_j with x_j a fixed function of the sample index: a linear
// regression a small MLP fits quickly.
class RegressionSource final : public zerotrain::BatchSource {
 public:
  Batch load(SampleRange range, MemoryTracker& tracker) const override {
    Batch batch;
    batch.samples = range.count;
    batch.inputs = Tensor::empty(Shape{range.count, kFeatures}, DType::kF32, tracker,
                                 MemoryCategory::kActivations);
    batch.targets =
        Tensor::empty(Shape{range.count, 1}, DType::kF32, tracker, MemoryCategory::kActivations);
    float* x = batch.inputs.data_as<float>();
    float* y = batch.targets.data_as<float>();
    for (std::int64_t i = 0; i < range.count; ++i) {
      const auto index = static_cast<double>(range.first + i);
      double target = 0;
      for (std::int64_t j = 0; j < kFeatures; ++j) {
        const double value = std::sin(0.37 * index * static_cast<double>(j + 1) + 0.11 * index);
        x[i * kFeatures + j] = static_cast<float>(value);
        target += static_cast<double>(j + 1) / kFeatures * value;
      }
      y[i] = static_cast<float>(target);
    }
    return batch;
  }
};

zerotrain::nn::Model regression_mlp() {
  zerotrain::nn::Model model("regression");
  model.add_block("hidden", std::make_unique<zerotrain::nn::Linear>("hidden", kFeatures, 16, true));
  model.add_block("relu", std::make_unique<zerotrain::nn::Relu>());
  model.add_block("head", std::make_unique<zerotrain::nn::Linear>("head", 16, 1, true));
  return model;
}

zerotrain::Config config(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), {"train.steps=40", "train.micro_batch_size=16",
                                       "optimizer.lr=0.02", "run.overwrite=true"});
  return zerotrain::parse_config("", overrides, "engine_test.toml");
}

zerotrain::EngineOptions quiet() {
  zerotrain::EngineOptions options;
  options.write_run_dir = false;
  options.show_progress = false;
  return options;
}

template <class F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const zerotrain::Error& e) {
    return e.what();
  }
  return "(no zerotrain::Error thrown)";
}

TEST(Engine, TrainsAUserModelOnAUserSourceWithMeanSquaredError) {
  const zt::testing::TempDir temp;
  zerotrain::EngineOptions options;
  options.show_progress = false;
  std::vector<double> seen;
  options.on_step = [&](zerotrain::Engine& engine, const zerotrain::StepMetrics& metrics) {
    EXPECT_EQ(metrics.step, engine.steps_done());
    seen.push_back(metrics.loss);
  };
  zerotrain::Engine engine(config({"run.dir=" + (temp / "run").string()}), regression_mlp(),
                           std::make_unique<RegressionSource>(),
                           zerotrain::make_mean_squared_error_loss(), options);
  EXPECT_EQ(engine.world_size(), 1);
  EXPECT_EQ(engine.parameter_count(), kFeatures * 16 + 16 + 16 + 1);
  const zerotrain::TrainSummary summary = engine.train();
  engine.finish();
  ASSERT_EQ(summary.losses.size(), 40u);
  EXPECT_EQ(seen, summary.losses);
  EXPECT_LT(summary.losses.back(), 0.2 * summary.losses.front())
      << "first " << summary.losses.front() << " last " << summary.losses.back();
  EXPECT_TRUE(std::isnan(summary.metrics.back().tokens_per_s));
  EXPECT_TRUE(std::filesystem::exists(temp / "run" / "metrics.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(temp / "run" / "memory.json"));
  EXPECT_NE(engine.memory_summary().find("parameters"), std::string::npos);
}

TEST(Engine, StepOnTheBatchesTrainWouldLoadGivesTrainsLosses) {
  const zerotrain::Config settings = config({"train.steps=8", "train.grad_accum_steps=2"});
  zerotrain::Engine trained(settings, regression_mlp(), std::make_unique<RegressionSource>(),
                            zerotrain::make_mean_squared_error_loss(), quiet());
  const std::vector<double> expected = trained.train().losses;
  trained.finish();

  // One rank: step s takes samples [(s-1)·32, s·32), its two micro-batches in order; and
  // load_step_batch loads exactly that.
  zerotrain::Engine stepped(settings, regression_mlp(), nullptr,
                            zerotrain::make_mean_squared_error_loss(), quiet());
  const RegressionSource source;
  std::vector<double> losses;
  for (std::int64_t step = 1; step <= 8; ++step) {
    const Batch batch = source.load(SampleRange{(step - 1) * 32, 32}, stepped.batch_memory());
    const Batch loaded = stepped.load_step_batch(source, step);
    ASSERT_EQ(loaded.samples, 32);
    ASSERT_EQ(loaded.inputs.shape(), batch.inputs.shape());
    EXPECT_EQ(
        std::vector<float>(loaded.inputs.span<float>().begin(), loaded.inputs.span<float>().end()),
        std::vector<float>(batch.inputs.span<float>().begin(), batch.inputs.span<float>().end()));
    losses.push_back(stepped.step(loaded).loss);
  }
  stepped.finish();
  EXPECT_EQ(losses, expected);
}

// A user's own loop saves where it likes; an Engine resuming from that checkpoint continues
// with the losses and weights of the loop that never stopped, bit for bit.
TEST(Engine, SaveCheckpointInAUserLoopAndResumeFromIt) {
  const zt::testing::TempDir temp;
  const std::string dir = "checkpoint.dir=" + (temp / "ckpt").string();
  const zerotrain::Config settings = config({"train.steps=6", dir, "optimizer.type=adamw"});
  const RegressionSource source;
  zerotrain::Engine whole(settings, regression_mlp(), nullptr,
                          zerotrain::make_mean_squared_error_loss(), quiet());
  std::vector<double> losses;
  std::string saved;
  for (std::int64_t step = 1; step <= 6; ++step) {
    losses.push_back(whole.step(whole.load_step_batch(source, step)).loss);
    if (step == 4) saved = whole.save_checkpoint();
  }
  const std::vector<float> final_weights = whole.full_parameters();
  whole.finish();
  EXPECT_EQ(saved, (temp / "ckpt" / "step-00000004").string());
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(saved) / "manifest.toml"));

  zerotrain::Engine resumed(
      config({"train.steps=6", dir, "optimizer.type=adamw", "checkpoint.resume=" + saved}),
      regression_mlp(), nullptr, zerotrain::make_mean_squared_error_loss(), quiet());
  ASSERT_EQ(resumed.steps_done(), 4);
  std::vector<double> continued;
  for (std::int64_t step = resumed.steps_done() + 1; step <= 6; ++step) {
    continued.push_back(resumed.step(resumed.load_step_batch(source, step)).loss);
  }
  EXPECT_EQ(continued, std::vector<double>(losses.begin() + 4, losses.end()));
  EXPECT_EQ(resumed.full_parameters(), final_weights);
  resumed.finish();
}

TEST(Engine, EvaluateReportsTheLossWithoutChangingTheModel) {
  zerotrain::Engine engine(config({"train.steps=4"}), regression_mlp(), nullptr,
                           zerotrain::make_mean_squared_error_loss(), quiet());
  const RegressionSource source;
  const Batch held_out = source.load(SampleRange{100000, 64}, engine.batch_memory());
  const Batch batch = source.load(SampleRange{0, 16}, engine.batch_memory());
  const double first = engine.evaluate(held_out);
  EXPECT_EQ(engine.evaluate(held_out), first);
  EXPECT_EQ(engine.steps_done(), 0);
  const std::vector<float> before = engine.full_parameters();
  const double on_batch = engine.evaluate(batch);
  EXPECT_EQ(engine.full_parameters(), before);
  // The step's loss is the forward on the same batch before the update.
  EXPECT_NEAR(engine.step(batch).loss, on_batch, 1e-6 * std::abs(on_batch));
  EXPECT_NE(engine.full_parameters(), before);
  engine.finish();
}

TEST(EngineBadInput, AModelWithoutParametersIsRefusedNamingItsBlocks) {
  zerotrain::nn::Model model("activations_only");
  model.add_block("relu", std::make_unique<zerotrain::nn::Relu>());
  const std::string error = error_of([&] {
    zerotrain::Engine engine(config(), std::move(model), std::make_unique<RegressionSource>(),
                             nullptr, quiet());
  });
  EXPECT_NE(error.find("'activations_only' has no parameters"), std::string::npos) << error;
  EXPECT_NE(error.find("relu"), std::string::npos) << error;

  const std::string empty = error_of([&] {
    zerotrain::Engine engine(config(), zerotrain::nn::Model("empty"), nullptr, nullptr, quiet());
  });
  EXPECT_NE(empty.find("'empty' has no blocks"), std::string::npos) << empty;
}

TEST(EngineBadInput, ABatchOfTheWrongShapeNamesTheShapes) {
  zerotrain::Engine engine(config(), regression_mlp(), nullptr,
                           zerotrain::make_mean_squared_error_loss(), quiet());
  MemoryTracker& tracker = engine.batch_memory();
  const RegressionSource source;

  const std::string too_few = error_of([&] { engine.step(source.load({0, 10}, tracker)); });
  EXPECT_NE(too_few.find("16 samples"), std::string::npos) << too_few;
  EXPECT_NE(too_few.find("got 10"), std::string::npos) << too_few;

  Batch wide;
  wide.samples = 16;
  wide.inputs =
      Tensor::zeros(Shape{16, kFeatures + 1}, DType::kF32, tracker, MemoryCategory::kActivations);
  wide.targets = Tensor::zeros(Shape{16, 1}, DType::kF32, tracker, MemoryCategory::kActivations);
  const std::string width = error_of([&] { engine.step(wide); });
  EXPECT_NE(width.find("hidden: the input (16, 7) f32 does not end in in_features = 6"),
            std::string::npos)
      << width;

  Batch mismatched = source.load({0, 16}, tracker);
  mismatched.targets =
      Tensor::zeros(Shape{16, 2}, DType::kF32, tracker, MemoryCategory::kActivations);
  const std::string targets = error_of([&] { engine.step(mismatched); });
  EXPECT_NE(targets.find("mean_squared_error"), std::string::npos) << targets;
  EXPECT_NE(targets.find("(16, 2)"), std::string::npos) << targets;

  Batch miscounted = source.load({0, 16}, tracker);
  miscounted.samples = 8;
  const std::string count = error_of([&] { engine.evaluate(miscounted); });
  EXPECT_NE(count.find("says 8 samples"), std::string::npos) << count;

  // Nothing above changed the model: a good batch still trains.
  EXPECT_TRUE(std::isfinite(engine.step(source.load({0, 16}, tracker)).loss));
  engine.finish();
}

// A loss that returns NaN: the engine stops before backward, naming the loss and the step.
class NanLoss final : public zerotrain::Loss {
 public:
  std::string_view name() const override { return "nan_loss"; }
  zerotrain::LossResult compute(const Tensor& output, const Tensor& targets, float grad_scale,
                                zerotrain::LossContext& ctx) const override {
    zerotrain::LossResult result =
        zerotrain::make_mean_squared_error_loss()->compute(output, targets, grad_scale, ctx);
    result.loss_sum = std::numeric_limits<double>::quiet_NaN();
    return result;
  }
};

// The remedy names the learning rate as the config would write it (not 0.000000).
TEST(EngineBadInput, ALossThatReturnsNanNamesASmallLearningRateInFull) {
  zerotrain::Engine engine(config({"optimizer.lr=1e-9"}), regression_mlp(),
                           std::make_unique<RegressionSource>(), std::make_unique<NanLoss>(),
                           quiet());
  const std::string error = error_of([&] { engine.train(); });
  EXPECT_NE(error.find("optimizer.lr, now 1e-09"), std::string::npos) << error;
  engine.finish();
}

TEST(EngineBadInput, ALossThatReturnsNanNamesTheLossAndTheStep) {
  zerotrain::Engine engine(config(), regression_mlp(), std::make_unique<RegressionSource>(),
                           std::make_unique<NanLoss>(), quiet());
  const std::string error = error_of([&] { engine.train(); });
  EXPECT_NE(error.find("the loss 'nan_loss' is nan at step 1, micro-batch 0 on rank 0"),
            std::string::npos)
      << error;
  engine.finish();
}

// A loss whose gradient turns NaN from its third call on, its loss staying finite: the
// gradients become non-finite at step 3 with nothing earlier to catch it.
class NanGradientLoss final : public zerotrain::Loss {
 public:
  std::string_view name() const override { return "nan_gradient_loss"; }
  zerotrain::LossResult compute(const Tensor& output, const Tensor& targets, float grad_scale,
                                zerotrain::LossContext& ctx) const override {
    zerotrain::LossResult result =
        zerotrain::make_mean_squared_error_loss()->compute(output, targets, grad_scale, ctx);
    if (++calls_ >= 3) {
      result.grad_logits.data_as<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    }
    return result;
  }

 private:
  mutable int calls_ = 0;
};

// A non-finite gradient stops the run at its step, naming the remedies, whether the update
// reads the norm in its own pass (no clipping) or the norm is checked before it (clipping).
TEST(EngineBadInput, AGradientThatTurnsNanStopsAtItsStep) {
  for (const std::string clip : {"optimizer.max_grad_norm=0", "optimizer.max_grad_norm=1"}) {
    zerotrain::Engine engine(config({clip}), regression_mlp(), std::make_unique<RegressionSource>(),
                             std::make_unique<NanGradientLoss>(), quiet());
    const std::string error = error_of([&] { engine.train(); });
    EXPECT_NE(error.find("gradients became non-finite at step 3"), std::string::npos)
        << clip << ": " << error;
    EXPECT_NE(error.find("optimizer.max_grad_norm"), std::string::npos) << clip << ": " << error;
    EXPECT_EQ(engine.steps_done(), 2) << clip;
    engine.finish();
  }
}

TEST(EngineBadInput, TrainWithoutABatchSourceSaysToUseStep) {
  zerotrain::Engine engine(config(), regression_mlp(), nullptr,
                           zerotrain::make_mean_squared_error_loss(), quiet());
  const std::string error = error_of([&] { engine.train(); });
  EXPECT_NE(error.find("needs a batch source"), std::string::npos) << error;
  engine.finish();
}

TEST(EngineBadInput, StepsPastTheScheduleAreRefused) {
  zerotrain::Engine engine(config({"train.steps=1"}), regression_mlp(), nullptr,
                           zerotrain::make_mean_squared_error_loss(), quiet());
  const RegressionSource source;
  engine.step(source.load({0, 16}, engine.batch_memory()));
  const std::string error = error_of([&] {
    engine.step(source.load({16, 16}, engine.batch_memory()));
  });
  EXPECT_NE(error.find("step 2 is past train.steps = 1"), std::string::npos) << error;
  engine.finish();
}

}  // namespace
