// The GELU fused into the Linear GEMMs (Note [GELU in the GEMMs]): the fused kernels and the
// GeluMlp module equal the unfused sequence Linear, Gelu, Linear (bitwise in f32, within
// bf16 roundings in bf16), and GeluMlp's gradients match finite differences.
#include "nn/layers/gelu_mlp.h"

#include <gtest/gtest.h>

#include <memory>

#include "gradient_check.h"
#include "nn/layers/gelu.h"
#include "nn/layers/linear.h"
#include "nn/layers/sequential.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;
using testing::make_tensor;
using testing::random_values;
using testing::to_floats;

constexpr std::int64_t kRows = 6, kIn = 5, kHidden = 12, kOut = 7;

// The bound on a bf16 result that the fused path rounds once and the unfused path rounds
// twice (the pre-activation, then the GELU or its derivative): a few units of roundoff of
// the largest element, where a missing or misplaced GELU errs by O(1).
constexpr double kBf16Tolerance = 1.0 / 64;

void expect_close(const std::vector<float>& fused, const std::vector<float>& unfused, DType dtype,
                  const std::string& what) {
  if (dtype == DType::kF32) {
    testing::expect_bitwise_equal(fused, unfused, what);
  } else {
    testing::expect_normwise_close(fused, unfused, kBf16Tolerance, what);
  }
}

class FusedLinearGelu : public ::testing::TestWithParam<DType> {
 protected:
  Tensor make(const Shape& shape, std::uint64_t seed, DType dtype, float scale = 1.0f) {
    return make_tensor(random_values(shape.numel(), seed, dtype, scale), shape, dtype, tracker_,
                       MemoryCategory::kActivations);
  }
  Tensor zeros(const Shape& shape, DType dtype) {
    return Tensor::zeros(shape, dtype, tracker_, MemoryCategory::kActivations);
  }

  MemoryTracker tracker_{Device::cpu()};
  testing::CpuTestContext cpu_{tracker_};
};

TEST_P(FusedLinearGelu, ForwardWritesThePreActivationAndItsGelu) {
  const DType dtype = GetParam();
  const Tensor x = make(Shape{kRows, kIn}, 1, dtype), w = make(Shape{kHidden, kIn}, 2, dtype);
  const Tensor b = make(Shape{kHidden}, 3, dtype);
  const Tensor pre = zeros(Shape{kRows, kHidden}, dtype), h = zeros(Shape{kRows, kHidden}, dtype);
  cpu_kernels().linear_forward(cpu_.device(), x, w, b, h, pre);

  const Tensor y = zeros(Shape{kRows, kHidden}, dtype), h_ref = zeros(Shape{kRows, kHidden}, dtype);
  cpu_kernels().linear_forward(cpu_.device(), x, w, b, y, Tensor());
  cpu_kernels().gelu_forward(cpu_.device(), y, h_ref);
  // The pre-activation is the Linear's output, rounded the same way.
  testing::expect_bitwise_equal(to_floats(pre), to_floats(y), "pre_gelu");
  expect_close(to_floats(h), to_floats(h_ref), dtype, "gelu output");
}

TEST_P(FusedLinearGelu, BackwardAppliesTheGeluDerivativeAndAccumulatesItsBiasGradient) {
  const DType dtype = GetParam();
  const Tensor h = make(Shape{kRows, kHidden}, 4, dtype),
               pre = make(Shape{kRows, kHidden}, 5, dtype);
  const Tensor w = make(Shape{kOut, kHidden}, 6, dtype, 0.5f),
               dy = make(Shape{kRows, kOut}, 7, dtype);
  const Tensor dpre = zeros(Shape{kRows, kHidden}, dtype);
  const Tensor dw = zeros(Shape{kOut, kHidden}, DType::kF32), db = zeros(Shape{kOut}, DType::kF32);
  Tensor db_pre = zeros(Shape{kHidden}, DType::kF32);
  for (float& v : db_pre.span<float>()) v = 1.0f;  // accumulated into, not overwritten
  cpu_kernels().linear_backward(cpu_.device(), h, w, dy, dpre, dw, db, pre, db_pre);

  const Tensor dh = zeros(Shape{kRows, kHidden}, dtype),
               dpre_ref = zeros(Shape{kRows, kHidden}, dtype);
  const Tensor dw_ref = zeros(Shape{kOut, kHidden}, DType::kF32);
  const Tensor db_ref = zeros(Shape{kOut}, DType::kF32);
  cpu_kernels().linear_backward(cpu_.device(), h, w, dy, dh, dw_ref, db_ref, Tensor(), Tensor());
  cpu_kernels().gelu_backward(cpu_.device(), pre, dh, dpre_ref);
  std::vector<float> db_pre_ref(kHidden, 1.0f);
  const std::vector<float> dpre_values = to_floats(dpre_ref);
  for (std::int64_t n = 0; n < kRows; ++n) {
    for (std::int64_t c = 0; c < kHidden; ++c) db_pre_ref[c] += dpre_values[n * kHidden + c];
  }
  expect_close(to_floats(dpre), dpre_values, dtype, "dpre");
  testing::expect_bitwise_equal(to_floats(dw), to_floats(dw_ref), "dweight");
  testing::expect_bitwise_equal(to_floats(db), to_floats(db_ref), "dbias");
  expect_close(to_floats(db_pre), db_pre_ref, dtype, "pre-GELU dbias");
}

// Linear, Gelu, Linear with the names and parameter order GeluMlp has.
Sequential unfused_mlp() {
  Sequential seq;
  seq.add(std::make_unique<Linear>("fc", kIn, kHidden, true, Init::normal(0.02f)));
  seq.add(std::make_unique<Gelu>());
  seq.add(std::make_unique<Linear>("proj", kHidden, kIn, true, Init::normal(0.02f)));
  return seq;
}

TEST_P(FusedLinearGelu, GeluMlpEqualsLinearGeluLinear) {
  const DType dtype = GetParam();
  GeluMlp fused("fc", "proj", kIn, kHidden, Init::normal(0.02f), Init::normal(0.02f));
  Sequential unfused = unfused_mlp();
  ASSERT_EQ(fused.parameter_specs().size(), unfused.parameter_specs().size());
  for (std::size_t p = 0; p < fused.parameter_specs().size(); ++p) {
    EXPECT_EQ(fused.parameter_specs()[p].name, unfused.parameter_specs()[p].name);
    EXPECT_EQ(fused.parameter_specs()[p].shape, unfused.parameter_specs()[p].shape);
  }
  const Shape input_shape{2, 3, kIn};
  // Two passes: the second accumulates onto the first's gradients.
  const std::vector<testing::PrecisionCase> passes{
      testing::random_case(fused, input_shape, input_shape.numel(), 11, dtype),
      testing::random_case(fused, input_shape, input_shape.numel(), 12, dtype)};
  const testing::PrecisionRun a = testing::run_in_dtype(fused, dtype, passes);
  const testing::PrecisionRun b = testing::run_in_dtype(unfused, dtype, passes);
  expect_close(a.output, b.output, dtype, "y");
  expect_close(a.grad_input, b.grad_input, dtype, "dx");
  for (std::size_t p = 0; p < a.grads.size(); ++p) {
    expect_close(a.grads[p], b.grads[p], dtype, fused.parameter_specs()[p].name);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedLinearGelu, ::testing::Values(DType::kF32, DType::kBF16),
                         testing::dtype_test_name);

// The activations peak of forward then backward: GeluMlp allocates one (N, H) gradient fewer
// but must not hold pre and h past the GEMM that reads them, so its peak is exactly that of
// Linear, Gelu, Linear (pre, h and one (N, H) gradient live at once), not one dx above it.
std::int64_t activations_peak(Module& module) {
  MemoryTracker tracker(Device::cpu());
  testing::ModuleState state = testing::make_state(module, tracker, 31);
  testing::CpuTestContext cpu_context(tracker);
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor x =
      Tensor::zeros(Shape{kRows, kIn}, DType::kF32, tracker, MemoryCategory::kActivations);
  const Tensor y = module.forward(state.params, x, ctx);
  const Tensor dx = module.backward(state.params, state.grads, y, ctx);
  EXPECT_TRUE(saved.empty());
  return tracker.peak_bytes(MemoryCategory::kActivations);
}

TEST(GeluMlpMemory, BackwardPeaksWhereLinearGeluLinearPeaks) {
  GeluMlp fused("fc", "proj", kIn, kHidden, Init::normal(0.02f), Init::normal(0.02f));
  Sequential unfused = unfused_mlp();
  const std::int64_t peak = activations_peak(fused);
  EXPECT_EQ(peak, activations_peak(unfused));
  // x and y (the dy) of (N, C); pre, h and one gradient of (N, H); f32.
  EXPECT_EQ(peak, (kRows * kIn + kRows * kIn + kRows * kHidden * 3) * 4);
}

TEST(GeluMlpGradients, MatchFiniteDifferences) {
  GeluMlp mlp("fc", "proj", 4, 8, Init::normal(0.02f), Init::normal(0.02f));
  testing::expect_gradients_match(mlp, Shape{2, 3, 4}, 21);
}

}  // namespace
}  // namespace zt::nn
