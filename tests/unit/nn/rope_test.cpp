// Rope, the helper a Llama attention layer calls: it turns q and k of a fused qkv in place
// (v keeps its bits), its backward turns the gradients back, and theta is checked.
#include "nn/layers/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

// 2 query heads over 1 kv head of 4: q columns [0, 8), k [8, 12), v [12, 16).
TEST(Rope, TurnsQAndKButNotVAndBackwardTurnsThemBack) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu_context(tracker);
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  const Shape shape{2, 3, 16};
  const std::vector<float> values = testing::random_values(shape.numel(), 111, DType::kF32);
  Tensor qkv =
      testing::make_tensor(values, shape, DType::kF32, tracker, MemoryCategory::kActivations);
  const Rope rope(10000.0f);
  rope.forward(split_qkv(qkv, 2, 1), 5, ctx);
  const float* y = qkv.data_as<float>();
  for (std::int64_t row = 0; row < 6; ++row) {
    double q_change = 0.0;
    double k_change = 0.0;
    for (std::int64_t c = 0; c < 16; ++c) {
      const std::size_t i = static_cast<std::size_t>(row * 16 + c);
      const double change = std::fabs(double{y[i]} - values[i]);
      if (c < 8) q_change += change;
      if (c >= 8 && c < 12) k_change += change;
      if (c >= 12) {
        ASSERT_EQ(y[i], values[i]) << "v moved: row " << row << " column " << c;
      }
    }
    EXPECT_GT(q_change, 1e-3) << "q not turned in row " << row;
    EXPECT_GT(k_change, 1e-3) << "k not turned in row " << row;
  }
  rope.backward(split_qkv(qkv, 2, 1), 5, ctx);
  for (std::size_t i = 0; i < values.size(); ++i) ASSERT_NEAR(y[i], values[i], 1e-6) << i;
}

TEST(Rope, RejectsANonPositiveTheta) {
  EXPECT_THROW(Rope(0.0f), InternalError);
  EXPECT_THROW(Rope(-1.0f), InternalError);
}

}  // namespace
}  // namespace zt::nn
