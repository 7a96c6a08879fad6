// SwiGluMlp: gradients against finite differences, its parameters, its output against a
// double-precision loop over Hugging Face's gate_proj / up_proj / down_proj (gate rows first
// in fc), what it keeps for backward, and its bf16/f16 path against its f32 path.
#include "nn/layers/swiglu_mlp.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_context.h"
#include "gradient_check.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

constexpr std::int64_t kChannels = 4, kHidden = 5;

SwiGluMlp make_mlp() {
  return SwiGluMlp("mlp.fc", "mlp.proj", kChannels, kHidden, Init::normal(0.02f),
                   Init::normal(0.01f));
}

TEST(SwiGluMlpGradients, MatchFiniteDifferences) {
  SwiGluMlp mlp = make_mlp();
  testing::expect_gradients_match(mlp, Shape{2, 3, kChannels}, 81);
}

TEST(SwiGluMlp, DeclaresAFusedGateUpWeightAndAProjectionWithoutBiases) {
  const auto specs = make_mlp().parameter_specs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "mlp.fc.weight");
  EXPECT_EQ(specs[0].shape, (Shape{2 * kHidden, kChannels}));
  EXPECT_EQ(specs[1].name, "mlp.proj.weight");
  EXPECT_EQ(specs[1].shape, (Shape{kChannels, kHidden}));
}

// y = down(silu(gate(x)) * up(x)) with gate = fc rows [0, F) and up = fc rows [F, 2F);
// forward keeps x and gate_up (2F per row) and nothing else for backward.
TEST(SwiGluMlp, ComputesSiluOfTheGateRowsTimesTheUpRows) {
  MemoryTracker tracker(Device::cpu());
  SwiGluMlp mlp = make_mlp();
  const testing::ModuleState state = testing::make_state(mlp, tracker, 91);
  const std::int64_t rows = 3;
  Tensor x =
      Tensor::zeros(Shape{rows, kChannels}, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data_as<float>()[i] = standard_normal(92, static_cast<std::uint64_t>(i));
  }
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const std::int64_t before = tracker.current_bytes(MemoryCategory::kActivations);
  const Tensor y = mlp.forward(state.params, x, ctx);
  // The output (rows, C) and the saved gate_up (rows, 2F) in f32; h was freed.
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations) - before,
            (rows * kChannels + rows * 2 * kHidden) * 4);
  const float* fc = state.params[0].data_as<float>();
  const float* proj = state.params[1].data_as<float>();
  for (std::int64_t n = 0; n < rows; ++n) {
    const float* xr = x.data_as<float>() + n * kChannels;
    std::vector<double> h(kHidden);
    for (std::int64_t f = 0; f < kHidden; ++f) {
      double gate = 0.0;
      double up = 0.0;
      for (std::int64_t c = 0; c < kChannels; ++c) {
        gate += double{fc[f * kChannels + c]} * xr[c];
        up += double{fc[(kHidden + f) * kChannels + c]} * xr[c];
      }
      h[static_cast<std::size_t>(f)] = gate / (1.0 + std::exp(-gate)) * up;
    }
    for (std::int64_t c = 0; c < kChannels; ++c) {
      double expected = 0.0;
      for (std::int64_t f = 0; f < kHidden; ++f) {
        expected += double{proj[c * kHidden + f]} * h[static_cast<std::size_t>(f)];
      }
      EXPECT_NEAR(y.data_as<float>()[n * kChannels + c], expected, 1e-5) << n << ", " << c;
    }
  }
  saved.clear();
}

// The low-precision path rounds gate_up and h once each before the next GEMM reads them, so
// its results are a few roundings of the largest element from the f32 path's (a swapped
// gate and up, or a missing silu, errs by O(1)).
class SwiGluMlpMixedPrecision : public ::testing::TestWithParam<DType> {};

TEST_P(SwiGluMlpMixedPrecision, StaysWithinAFewRoundingsOfF32) {
  const DType dtype = GetParam();
  SwiGluMlp mlp("fc", "proj", 16, 24, Init::normal(0.02f), Init::normal(0.02f));
  const auto c = testing::random_case(mlp, Shape{2, 4, 16}, 2 * 4 * 16, 101, dtype);
  const auto ref = testing::run_in_dtype(mlp, DType::kF32, c);
  const auto low = testing::run_in_dtype(mlp, dtype, c);
  const double tolerance = 8 * testing::unit_roundoff(dtype);
  testing::expect_normwise_close(low.output, ref.output, tolerance, "y");
  testing::expect_normwise_close(low.grad_input, ref.grad_input, tolerance, "dx");
  testing::expect_normwise_close(low.grads[0], ref.grads[0], tolerance, "dWfc");
  testing::expect_normwise_close(low.grads[1], ref.grads[1], tolerance, "dWproj");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SwiGluMlpMixedPrecision,
                         ::testing::Values(DType::kBF16, DType::kF16), testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
