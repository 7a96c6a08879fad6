// MemoryPlan and the ZeRO paper's arithmetic: the formulas reproduce the paper's table, and
// the plan's bytes per category are what each stage's buffers add up to.
#include "sharding/memory_plan.h"

#include <gtest/gtest.h>

namespace zt::zero {
namespace {

constexpr double kPsi = 1000.0;

TEST(ZeroFormula, ReproducesThePapersMixedPrecisionAndFp32Tables) {
  for (int n : {1, 2, 4, 64}) {
    const double mixed[] = {16 * kPsi, 4 * kPsi + 12 * kPsi / n, 2 * kPsi + 14 * kPsi / n,
                            16 * kPsi / n};
    const double fp32[] = {16 * kPsi, 8 * kPsi + 8 * kPsi / n, 4 * kPsi + 12 * kPsi / n,
                           16 * kPsi / n};
    for (int stage = 0; stage <= 3; ++stage) {
      EXPECT_DOUBLE_EQ(zero_formula_bytes(stage, kPsi, n, DType::kBF16, 2), mixed[stage])
          << "stage " << stage << ", N " << n;
      EXPECT_DOUBLE_EQ(zero_formula_bytes(stage, kPsi, n, DType::kF32, 2), fp32[stage])
          << "stage " << stage << ", N " << n;
    }
  }
}

MemoryPlan plan(int stage, DType compute, DType grads, std::int64_t accum) {
  // 4 ranks, 4096 padded elements, a 1024-element shard, Adam.
  return plan_memory({stage, compute, grads, 4, 4096, 1024, 2, accum});
}

TEST(MemoryPlan, Fp32MasterIsTheParameterStorage) {
  for (int stage = 0; stage <= 3; ++stage) {
    EXPECT_FALSE(plan(stage, DType::kF32, DType::kF32, 1).separate_master);
  }
  EXPECT_EQ(plan(3, DType::kF32, DType::kF32, 1).optimizer_state_bytes, 1024 * 8);
  EXPECT_EQ(plan(3, DType::kBF16, DType::kBF16, 1).optimizer_state_bytes, 1024 * 12);
}

TEST(MemoryPlan, StageOneKeepsFullGradientsOnlyWhenAccumulating) {
  const MemoryPlan once = plan(1, DType::kF32, DType::kF32, 1);
  EXPECT_FALSE(once.full_gradients);
  EXPECT_TRUE(once.transient_block_gradients);
  EXPECT_EQ(once.gradient_bytes, 1024 * 4);
  const MemoryPlan accumulating = plan(1, DType::kF32, DType::kF32, 4);
  EXPECT_TRUE(accumulating.full_gradients);
  EXPECT_FALSE(accumulating.transient_block_gradients);
  EXPECT_EQ(accumulating.gradient_bytes, 4096 * 4);
}

TEST(MemoryPlan, NarrowGradientsAreWrittenThroughTransientBlocks) {
  const MemoryPlan ddp = plan(0, DType::kBF16, DType::kBF16, 1);
  EXPECT_TRUE(ddp.full_gradients);
  EXPECT_TRUE(ddp.transient_block_gradients);
  EXPECT_EQ(ddp.gradient_bytes, 4096 * 2);
  EXPECT_EQ(ddp.model_state_bytes(), 16 * 4096);
}

TEST(MemoryPlan, StageThreeKeepsOnlyShards) {
  const MemoryPlan stage3 = plan(3, DType::kBF16, DType::kBF16, 1);
  EXPECT_FALSE(stage3.full_parameters);
  EXPECT_EQ(stage3.model_state_bytes(), 16 * 1024);
}

}  // namespace
}  // namespace zt::zero
