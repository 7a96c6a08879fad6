// The dtype contract with the sharding layer: gradients accumulate in f32 across backward
// calls, parameters must come in the activations' dtype, and scratch is freed per call.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_context.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/layers/embedding.h"
#include "nn/layers/layer_norm.h"
#include "nn/layers/linear.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

// Two forward/backward passes into the same f32 gradients must give g1 + g2 up to f32
// round-off. The second pass's dL/dy is scaled by 2^-12, so its gradient is ~2^-12 of the
// first: summed in bf16 (u = 2^-8) or f16 (2^-11) it would be lost or mangled entirely,
// an error of ~2^-12 |g|; in f32 the two summation orders (g1 + t1 + .. + tK against
// g1 + (t1 + .. + tK)) differ by at most ~K 2^-24 of |g| for the K terms per element.
void expect_second_pass_adds_in_f32(Module& module, const Shape& input_shape,
                                    std::int64_t output_numel, std::int64_t terms, DType dtype,
                                    const Tensor& ids = Tensor()) {
  auto first = testing::random_case(module, input_shape, output_numel, 21, dtype);
  auto second = testing::random_case(module, input_shape, output_numel, 22, dtype);
  second.params = first.params;  // the same weights, as within one accumulation window
  for (float& dy : second.grad_output) dy = std::ldexp(dy, -12);  // exact: a power of two
  first.ids = ids;
  second.ids = ids;
  const auto g1 = testing::run_in_dtype(module, dtype, first).grads;
  const auto g2 = testing::run_in_dtype(module, dtype, second).grads;
  const auto both =
      testing::run_in_dtype(module, dtype, std::vector<testing::PrecisionCase>{first, second})
          .grads;
  for (std::size_t p = 0; p < g1.size(); ++p) {
    std::vector<float> sum(g1[p].size());
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = g1[p][i] + g2[p][i];
    testing::expect_normwise_close(both[p], sum, static_cast<double>(terms) * std::ldexp(1.0, -24),
                                   "gradient " + std::to_string(p));
  }
}

class GradientAccumulation : public ::testing::TestWithParam<DType> {};

TEST_P(GradientAccumulation, LinearAddsTheSecondBackwardInF32) {
  Linear linear("fc", 40, 12, true);
  expect_second_pass_adds_in_f32(linear, Shape{24, 40}, 24 * 12, 24, GetParam());
}

TEST_P(GradientAccumulation, LayerNormAddsTheSecondBackwardInF32) {
  LayerNorm norm("ln", 32);
  expect_second_pass_adds_in_f32(norm, Shape{16, 32}, 16 * 32, 16, GetParam());
}

TEST_P(GradientAccumulation, EmbeddingAddsTheSecondBackwardInF32) {
  Embedding embedding(5, 8, 16);
  std::vector<std::int32_t> ids(4 * 8);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((3 * i) % 5);
  // wte rows gather up to 8 positions each, wpe rows the 4 batch rows: at most 8 terms.
  expect_second_pass_adds_in_f32(embedding, Shape{4, 8}, 4 * 8 * 16, 8, GetParam(),
                                 Tensor::wrap(ids.data(), Shape{4, 8}, DType::kI32));
}

INSTANTIATE_TEST_SUITE_P(LowPrecision, GradientAccumulation,
                         ::testing::Values(DType::kBF16, DType::kF16), testing::dtype_test_name);

TEST(MixedPrecisionContract, ParametersInAnotherDtypeThanTheInputAreAnError) {
  MemoryTracker tracker(Device::cpu());
  Linear linear("fc", 4, 3, true);
  const std::vector<Tensor> params{
      Tensor::zeros(Shape{3, 4}, DType::kF32, tracker, MemoryCategory::kParameters),
      Tensor::zeros(Shape{3}, DType::kF32, tracker, MemoryCategory::kParameters)};
  const Tensor x = Tensor::zeros(Shape{2, 4}, DType::kBF16, tracker, MemoryCategory::kActivations);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  EXPECT_THROW(linear.forward(params, x, ctx), InternalError);
}

TEST(MixedPrecisionContract, LowPrecisionGradientViewsAreAnError) {
  MemoryTracker tracker(Device::cpu());
  LayerNorm norm("ln", 4);
  const std::vector<Tensor> params{
      Tensor::zeros(Shape{4}, DType::kBF16, tracker, MemoryCategory::kParameters),
      Tensor::zeros(Shape{4}, DType::kBF16, tracker, MemoryCategory::kParameters)};
  const std::vector<Tensor> grads = params;  // bf16: not where f32 accumulation can happen
  const Tensor x = Tensor::zeros(Shape{2, 4}, DType::kBF16, tracker, MemoryCategory::kActivations);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = norm.forward(params, x, ctx);
  EXPECT_THROW(norm.backward(params, grads, y, ctx), InternalError);
}

// The bf16 Linear's f32 scratch (results, and operands widened where there is no bf16 GEMM) is
// tracked as workspace while it runs (so memory profiles see them) and all freed when each call
// returns.
TEST(MixedPrecisionContract, WorkspaceScratchIsTrackedAndFreedAfterEachCall) {
  MemoryTracker tracker(Device::cpu());
  Linear linear("fc", 64, 32, true);
  const std::vector<Tensor> params{
      Tensor::zeros(Shape{32, 64}, DType::kBF16, tracker, MemoryCategory::kParameters),
      Tensor::zeros(Shape{32}, DType::kBF16, tracker, MemoryCategory::kParameters)};
  const std::vector<Tensor> grads{
      Tensor::zeros(Shape{32, 64}, DType::kF32, tracker, MemoryCategory::kGradients),
      Tensor::zeros(Shape{32}, DType::kF32, tracker, MemoryCategory::kGradients)};
  const Tensor x = Tensor::zeros(Shape{8, 64}, DType::kBF16, tracker, MemoryCategory::kActivations);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = linear.forward(params, x, ctx);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  const bool bf16_gemm = cpu::bf16_gemm_available();
  if (bf16_gemm) {
    // The bf16 GEMM reads x and W as they are: only b (32) and y's f32 result (8, 32).
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 4 * (32 + 8 * 32));
  } else {
    // y's f32 result (8, 32) with x (8, 64), W (32, 64) and b (32) widened: the bias is added
    // after the GEMM, in the pass that rounds y (Note [GELU in the GEMMs]).
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 4 * (32 + 8 * 32 + 8 * 64 + 32 * 64));
  }
  tracker.reset_peaks();
  linear.backward(params, grads, y, ctx);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  if (bf16_gemm) {
    // dx's f32 result (8, 64), freed before db widens dy one row (32) at a time.
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 4 * (8 * 64));
  } else {
    // dx (8, 64) with dy (8, 32) and W (32, 64) widened; then dy and x (8, 64) for dW.
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 4 * (8 * 64 + 8 * 32 + 32 * 64));
  }
}

}  // namespace
}  // namespace zt::nn
