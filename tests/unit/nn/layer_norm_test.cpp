// LayerNorm: gradients against finite differences, and the normalization it promises.
#include "nn/layers/layer_norm.h"

#include <gtest/gtest.h>

#include "cpu_test_context.h"
#include "gradient_check.h"

namespace zt::nn {
namespace {

TEST(LayerNormGradients, MatchFiniteDifferences) {
  LayerNorm norm("ln", 6);
  testing::expect_gradients_match(norm, Shape{2, 3, 6}, 31);
}

TEST(LayerNorm, DeclaresOnesWeightAndZerosBias) {
  const auto specs = LayerNorm("ln_f", 4).parameter_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "ln_f.weight");
  EXPECT_EQ(specs[0].init.kind, Init::Kind::kOnes);
  EXPECT_EQ(specs[1].name, "ln_f.bias");
  EXPECT_EQ(specs[1].init.kind, Init::Kind::kZeros);
}

TEST(LayerNorm, RowsHaveZeroMeanAndUnitVarianceBeforeAffine) {
  MemoryTracker tracker(Device::cpu());
  const std::int64_t rows = 4;
  const std::int64_t channels = 16;
  LayerNorm norm("ln", channels);
  Tensor weight = Tensor::zeros(Shape{channels}, DType::kF32, tracker, MemoryCategory::kParameters);
  Tensor bias = Tensor::zeros(Shape{channels}, DType::kF32, tracker, MemoryCategory::kParameters);
  for (float& w : weight.span<float>()) w = 1.0f;
  // Offset and scale the rows so a missing mean subtraction or variance division shows.
  Tensor x =
      Tensor::zeros(Shape{rows, channels}, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data_as<float>()[i] = 5.0f + 3.0f * standard_normal(41, static_cast<std::uint64_t>(i));
  }
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const std::vector<Tensor> params{weight, bias};
  const Tensor y = norm.forward(params, x, ctx);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    double sq = 0.0;
    for (std::int64_t c = 0; c < channels; ++c) mean += y.data_as<float>()[r * channels + c];
    mean /= channels;
    for (std::int64_t c = 0; c < channels; ++c) {
      const double d = y.data_as<float>()[r * channels + c] - mean;
      sq += d * d;
    }
    EXPECT_NEAR(mean, 0.0, 1e-5) << "row " << r;
    EXPECT_NEAR(sq / channels, 1.0, 1e-3) << "row " << r;  // var / (var + eps), var ~ 9
  }
}

}  // namespace
}  // namespace zt::nn
