// RmsNorm: gradients against finite differences, the unit root mean square it promises (no
// mean subtracted), and its bf16/f16 path rounding once against its f32 path.
#include "nn/layers/rms_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_context.h"
#include "gradient_check.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

TEST(RmsNormGradients, MatchFiniteDifferences) {
  RmsNorm norm("rms", 6);
  testing::expect_gradients_match(norm, Shape{2, 3, 6}, 51);
}

TEST(RmsNorm, DeclaresAOnesWeightAndNoBias) {
  const auto specs = RmsNorm("norm", 4).parameter_specs();
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].name, "norm.weight");
  EXPECT_EQ(specs[0].shape, Shape{4});
  EXPECT_EQ(specs[0].init.kind, Init::Kind::kOnes);
}

// Rows offset by 5 keep their offset (a LayerNorm would remove it) and come out with unit
// root mean square under a ones weight.
TEST(RmsNorm, RowsHaveUnitRootMeanSquareAndKeepTheirMean) {
  MemoryTracker tracker(Device::cpu());
  const std::int64_t rows = 4;
  const std::int64_t channels = 16;
  RmsNorm norm("norm", channels);
  Tensor weight = Tensor::zeros(Shape{channels}, DType::kF32, tracker, MemoryCategory::kParameters);
  for (float& w : weight.span<float>()) w = 1.0f;
  Tensor x =
      Tensor::zeros(Shape{rows, channels}, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data_as<float>()[i] = 5.0f + standard_normal(61, static_cast<std::uint64_t>(i));
  }
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const std::vector<Tensor> params{weight};
  const Tensor y = norm.forward(params, x, ctx);
  for (std::int64_t r = 0; r < rows; ++r) {
    double sq = 0.0;
    double mean = 0.0;
    for (std::int64_t c = 0; c < channels; ++c) {
      const double v = y.data_as<float>()[r * channels + c];
      sq += v * v;
      mean += v;
    }
    EXPECT_NEAR(std::sqrt(sq / channels), 1.0, 1e-5) << "row " << r;
    EXPECT_GT(mean / channels, 0.9) << "row " << r << ": the mean was subtracted";
  }
}

// Note [Single-layer bounds] (mixed_precision_layers_test.cpp): the low-precision path
// widens to the f32 path's numbers and runs the same row math, so y and dx are one rounding
// from the f32 path's and the f32 weight gradient is its bits.
class RmsNormMixedPrecision : public ::testing::TestWithParam<DType> {};

TEST_P(RmsNormMixedPrecision, RoundsOnceAndKeepsF32Gradients) {
  const DType dtype = GetParam();
  RmsNorm norm("norm", 24);
  const auto c = testing::random_case(norm, Shape{3, 5, 24}, 3 * 5 * 24, 71, dtype);
  const auto ref = testing::run_in_dtype(norm, DType::kF32, c);
  const auto low = testing::run_in_dtype(norm, dtype, c);
  testing::expect_within_roundings(low.output, ref.output, 1, dtype, "y");
  testing::expect_within_roundings(low.grad_input, ref.grad_input, 1, dtype, "dx");
  testing::expect_bitwise_equal(low.grads[0], ref.grads[0], "dweight");
  EXPECT_GT(low.workspace_peak_bytes, 0);
  EXPECT_EQ(ref.workspace_peak_bytes, 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RmsNormMixedPrecision,
                         ::testing::Values(DType::kBF16, DType::kF16), testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
