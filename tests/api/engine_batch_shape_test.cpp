// Bad batches through the public API: Engine::step and Engine::evaluate refuse a batch of
// the wrong shape with an exception that names the shapes, before anything is trained.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zerotrain/zerotrain.h>

#include <filesystem>
#include <string>

namespace {

class EngineBatchShape : public ::testing::Test {
 protected:
  void SetUp() override {
    run_dir_ = std::filesystem::path(::testing::TempDir()) /
               ("zt_batch_shape_" + std::to_string(::getpid()));
    std::filesystem::remove_all(run_dir_);
  }
  void TearDown() override { std::filesystem::remove_all(run_dir_); }

  // One rank (no launcher variables), micro-batches of 4 and 2 of them per step; ZeRO
  // stage 3, so a refused batch also leaves gathered parameters to release.
  zerotrain::Config config() const {
    return zerotrain::parse_config(
        "train.steps = 3\ntrain.micro_batch_size = 4\ntrain.grad_accum_steps = 2\n"
        "zero.stage = 3\n",
        {"run.dir=" + run_dir_.string()});
  }

  static zerotrain::nn::Model mlp() { return zerotrain::nn::make_mlp({5, 8, 3}); }

  zerotrain::MemoryTracker tracker_{zerotrain::Device::cpu()};
  std::filesystem::path run_dir_;

  zerotrain::Batch batch(std::int64_t samples, std::int64_t features) {
    zerotrain::Batch b;
    b.samples = samples;
    b.inputs = zerotrain::Tensor::zeros({samples, features}, zerotrain::DType::kF32, tracker_,
                                        zerotrain::MemoryCategory::kActivations);
    b.targets = zerotrain::Tensor::zeros({samples}, zerotrain::DType::kI32, tracker_,
                                         zerotrain::MemoryCategory::kActivations);
    return b;
  }
};

// The message of what `call` throws as a zerotrain::Error ("" when it throws nothing).
template <class Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const zerotrain::Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(EngineBatchShape, StepRefusesABatchThatIsNotThisRanksShare) {
  zerotrain::Engine engine(config(), mlp(), nullptr);
  const std::string error = error_of([&] { engine.step(batch(3, 5)); });
  EXPECT_NE(error.find("step(batch): expected this rank's share of the global batch, 8 samples "
                       "(train.micro_batch_size 4 × train.grad_accum_steps 2), got 3: "
                       "inputs (3, 5) f32, targets (3) i32"),
            std::string::npos)
      << error;
  EXPECT_EQ(engine.steps_done(), 0);
}

TEST_F(EngineBatchShape, StepRefusesSamplesThatDisagreeWithTheTensors) {
  zerotrain::Engine engine(config(), mlp(), nullptr);
  zerotrain::Batch wrong = batch(8, 5);
  wrong.targets = wrong.targets.slice_rows(0, 6);
  const std::string error = error_of([&] { engine.step(wrong); });
  EXPECT_NE(error.find("the batch says 8 samples, but its first axes hold inputs (8, 5) f32, "
                       "targets (6) i32"),
            std::string::npos)
      << error;
}

TEST_F(EngineBatchShape, StepRefusesFeaturesTheModelDoesNotTake) {
  zerotrain::Engine engine(config(), mlp(), nullptr);
  const std::string error = error_of([&] { engine.step(batch(8, 7)); });
  // The first layer names what it takes and what it got (of the first micro-batch of 4);
  // 4 × 10 inputs would also divide into rows of 5.
  EXPECT_NE(error.find("fc1: the input (4, 7) f32 does not end in in_features = 5"),
            std::string::npos)
      << error;
  const std::string wider = error_of([&] { engine.step(batch(8, 10)); });
  EXPECT_NE(wider.find("fc1: the input (4, 10) f32 does not end in in_features = 5"),
            std::string::npos)
      << wider;
  EXPECT_EQ(engine.steps_done(), 0);
}

TEST_F(EngineBatchShape, EvaluateRefusesABatchWithoutTargets) {
  zerotrain::Engine engine(config(), mlp(), nullptr);
  zerotrain::Batch no_targets = batch(4, 5);
  no_targets.targets = zerotrain::Tensor();
  const std::string error = error_of([&] { engine.evaluate(no_targets); });
  EXPECT_NE(error.find("evaluate(batch): a batch needs inputs and targets with a sample axis "
                       "first; got inputs (4, 5) f32, targets (none)"),
            std::string::npos)
      << error;
}

}  // namespace

namespace {

TEST_F(EngineBatchShape, AGoodStepStillRunsAfterARefusedBatch) {
  zerotrain::Engine engine(config(), mlp(), nullptr);
  EXPECT_FALSE(error_of([&] { engine.step(batch(8, 7)); }).empty());
  const zerotrain::StepMetrics metrics = engine.step(batch(8, 5));
  EXPECT_EQ(metrics.step, 1);
  EXPECT_EQ(engine.steps_done(), 1);
}

}  // namespace
