// Every layer's backward against finite differences.
#include <gtest/gtest.h>

#include "cpu_test_context.h"
#include "gradient_check.h"
#include "nn/layers/linear.h"
#include "nn/layers/relu.h"
#include "nn/layers/sequential.h"
#include "nn/loss/softmax_cross_entropy.h"

namespace zt::nn {
namespace {

TEST(LinearGradients, MatchFiniteDifferencesWithBias) {
  Linear linear("fc", 5, 3, true);
  testing::expect_gradients_match(linear, Shape{4, 5}, 11);
}

TEST(LinearGradients, MatchFiniteDifferencesWithoutBiasOn3dInput) {
  Linear linear("fc", 4, 6, false);
  testing::expect_gradients_match(linear, Shape{2, 3, 4}, 12);
}

TEST(ReluGradients, MatchFiniteDifferencesAwayFromZero) {
  Relu relu;
  // Random normal inputs are at least ~1e-3 from 0 with overwhelming probability; h = 1e-2
  // could straddle the kink, so check with a looser tolerance on a shape that avoids it.
  testing::expect_gradients_match(relu, Shape{3, 7}, 13, 5e-2);
}

TEST(SequentialGradients, LinearReluLinearMatchFiniteDifferences) {
  Sequential seq;
  seq.add(std::make_unique<Linear>("a", 6, 8, true));
  seq.add(std::make_unique<Relu>());
  seq.add(std::make_unique<Linear>("b", 8, 3, true));
  EXPECT_EQ(seq.parameter_specs().size(), 4u);
  EXPECT_EQ(seq.parameter_specs()[2].name, "b.weight");
  testing::expect_gradients_match(seq, Shape{5, 6}, 14, 5e-2);
}

TEST(SoftmaxCrossEntropy, LossAndGradientMatchDoubleReference) {
  MemoryTracker tracker(Device::cpu());
  const std::int64_t rows = 3;
  const std::int64_t classes = 5;
  Tensor logits =
      Tensor::zeros(Shape{rows, classes}, DType::kF32, tracker, MemoryCategory::kActivations);
  Tensor targets = Tensor::zeros(Shape{rows}, DType::kI32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < logits.numel(); ++i)
    logits.data_as<float>()[i] = 3.0f * standard_normal(5, static_cast<std::uint64_t>(i));
  targets.data_as<std::int32_t>()[0] = 0;
  targets.data_as<std::int32_t>()[1] = 4;
  targets.data_as<std::int32_t>()[2] = 2;
  const LossResult result = softmax_cross_entropy(
      logits, targets, 0.5f, *make_cpu_device_context(tracker), testing::cpu_kernels());
  double expected_loss = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* z = logits.data_as<float>() + r * classes;
    double sum = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(double{z[c]});
    const int t = targets.data_as<std::int32_t>()[r];
    expected_loss += std::log(sum) - z[t];
    for (std::int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(double{z[c]}) / sum;
      EXPECT_NEAR(result.grad_logits.data_as<float>()[r * classes + c], 0.5 * (p - (c == t)), 1e-6);
    }
  }
  EXPECT_NEAR(result.loss_sum, expected_loss, 1e-5);
  EXPECT_EQ(result.rows, rows);
}

// (B, T, V) logits with V = 320 columns of which the data's vocabulary holds 300 (Note [Padded
// vocabulary]): the loss sum is the double softmax's over the first 300 logits, the padded
// columns' gradient exactly 0, however large their logits.
TEST(SoftmaxCrossEntropy, PaddedVocabularyRowsTakeNoPart) {
  MemoryTracker tracker(Device::cpu());
  const std::int64_t rows = 4, classes = 300, columns = 320;
  Tensor logits = Tensor::zeros(Shape{2, rows / 2, columns}, DType::kF32, tracker,
                                MemoryCategory::kActivations);
  Tensor targets =
      Tensor::zeros(Shape{2, rows / 2}, DType::kI32, tracker, MemoryCategory::kActivations);
  float* z = logits.data_as<float>();
  for (std::int64_t i = 0; i < logits.numel(); ++i) {
    z[i] = i % columns < classes ? 3.0f * standard_normal(9, static_cast<std::uint64_t>(i)) : 20.0f;
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    targets.data_as<std::int32_t>()[r] = static_cast<std::int32_t>(r * 97 % classes);
  }
  const LossResult result = softmax_cross_entropy(
      logits, targets, 0.25f, *make_cpu_device_context(tracker), testing::cpu_kernels(), classes);
  double expected_loss = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = z + r * columns;
    double sum = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(double{row[c]});
    const int t = targets.data_as<std::int32_t>()[r];
    expected_loss += std::log(sum) - row[t];
    const float* dz = result.grad_logits.data_as<float>() + r * columns;
    for (std::int64_t c = 0; c < classes; ++c) {
      EXPECT_NEAR(dz[c], 0.25 * (std::exp(double{row[c]}) / sum - (c == t)), 1e-6);
    }
    for (std::int64_t c = classes; c < columns; ++c) EXPECT_EQ(dz[c], 0.0f) << "column " << c;
  }
  EXPECT_NEAR(result.loss_sum, expected_loss, 1e-4);
}

TEST(SoftmaxCrossEntropy, IsStableForHugeLogits) {
  MemoryTracker tracker(Device::cpu());
  Tensor logits = Tensor::zeros(Shape{1, 3}, DType::kF32, tracker, MemoryCategory::kActivations);
  Tensor targets = Tensor::zeros(Shape{1}, DType::kI32, tracker, MemoryCategory::kActivations);
  logits.data_as<float>()[0] = 1000.0f;
  logits.data_as<float>()[1] = 999.0f;
  logits.data_as<float>()[2] = -1000.0f;
  const LossResult result = softmax_cross_entropy(
      logits, targets, 1.0f, *make_cpu_device_context(tracker), testing::cpu_kernels());
  EXPECT_NEAR(result.loss_sum, std::log(1.0 + std::exp(-1.0)), 1e-5);
  EXPECT_TRUE(std::isfinite(result.grad_logits.data_as<float>()[2]));
}

TEST(SoftmaxCrossEntropy, TargetOutOfRangeIsAnError) {
  MemoryTracker tracker(Device::cpu());
  Tensor logits = Tensor::zeros(Shape{1, 3}, DType::kF32, tracker, MemoryCategory::kActivations);
  Tensor targets = Tensor::zeros(Shape{1}, DType::kI32, tracker, MemoryCategory::kActivations);
  targets.data_as<std::int32_t>()[0] = 3;
  EXPECT_THROW(softmax_cross_entropy(logits, targets, 1.0f, *make_cpu_device_context(tracker),
                                     testing::cpu_kernels()),
               InternalError);
}

}  // namespace
}  // namespace zt::nn
