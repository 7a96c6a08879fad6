// Softmax cross-entropy on bf16/f16 logits: the loss in f32, the gradient in the logits'
// dtype rounded once, and an f16 gradient that overflows to inf rather than NaN or a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_context.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

struct LossInputs {
  std::vector<float> logits;
  std::vector<std::int32_t> targets;
  Shape shape;
};

LossResult run_loss(const LossInputs& in, DType dtype, float grad_scale, MemoryTracker& tracker) {
  const Tensor logits =
      testing::make_tensor(in.logits, in.shape, dtype, tracker, MemoryCategory::kActivations);
  std::vector<std::int32_t> targets = in.targets;
  const Tensor t = Tensor::wrap(
      targets.data(), Shape{in.shape.numel() / in.shape[in.shape.rank() - 1]}, DType::kI32);
  return softmax_cross_entropy(logits, t, grad_scale, *make_cpu_device_context(tracker),
                               testing::cpu_kernels());
}

class MixedPrecisionLoss : public ::testing::TestWithParam<DType> {};

// The widened logits are the f32 path's numbers and the row math is the same f32 code, so
// the loss is the same bits and dz is the f32 dz rounded once (Note [Unit roundoff]).
TEST_P(MixedPrecisionLoss, LossIsF32AndGradientIsRoundedOnce) {
  const DType dtype = GetParam();
  LossInputs in{testing::random_values(6 * 50, 31, dtype, 3.0f), {}, Shape{2, 3, 50}};
  for (int r = 0; r < 6; ++r) in.targets.push_back((11 * r + 4) % 50);
  MemoryTracker tracker(Device::cpu());
  const LossResult ref = run_loss(in, DType::kF32, 1.0f / 6, tracker);
  const LossResult low = run_loss(in, dtype, 1.0f / 6, tracker);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  EXPECT_EQ(low.loss_sum, ref.loss_sum);
  EXPECT_EQ(low.rows, 6);
  ASSERT_EQ(low.grad_logits.dtype(), dtype);
  EXPECT_EQ(low.grad_logits.shape(), in.shape);
  testing::expect_within_roundings(testing::to_floats(low.grad_logits),
                                   testing::to_floats(ref.grad_logits), 1, dtype, "dz");
}

INSTANTIATE_TEST_SUITE_P(LowPrecision, MixedPrecisionLoss,
                         ::testing::Values(DType::kBF16, DType::kF16), testing::dtype_test_name);

// A loss scale of 2^24 (one row, so grad_scale = 2^24): the target's (p - 1) 2^24 and a
// likely class's p 2^24 are far past f16's largest finite 65504 and must come out as -inf
// and +inf, for the engine's overflow check to see and skip the step. An unlikely class
// (p ~ e^-20) stays finite; the loss itself is untouched by the scale.
TEST(F16LossScaling, HugeGradScaleOverflowsF16GradientsToInfinityNotNaN) {
  const LossInputs in{{0.0f, 2.0f, -20.0f, 1.0f}, {0}, Shape{1, 4}};
  MemoryTracker tracker(Device::cpu());
  const float scale = std::ldexp(1.0f, 24);
  const LossResult f16 = run_loss(in, DType::kF16, scale, tracker);
  const LossResult f32 = run_loss(in, DType::kF32, scale, tracker);
  const std::vector<float> dz = testing::to_floats(f16.grad_logits);
  EXPECT_EQ(dz[0], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(dz[1], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isfinite(dz[2]) && dz[2] > 0.0f) << dz[2];
  EXPECT_EQ(dz[3], std::numeric_limits<float>::infinity());
  for (const float v : dz) EXPECT_FALSE(std::isnan(v));
  EXPECT_TRUE(std::isfinite(f16.loss_sum));
  EXPECT_EQ(f16.loss_sum, f32.loss_sum);
  for (const float v : testing::to_floats(f32.grad_logits)) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace zt::nn
