// The dynamic loss scaler: back off and skip on overflow, grow after clean runs, stop at
// the minimum with a clear error.
#include "optim/loss_scaler.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace zt::optim {
namespace {

TEST(DynamicLossScaler, OverflowSkipsTheStepAndBacksOff) {
  DynamicLossScaler scaler({1024.0, 3, 2.0, 0.5, 1.0});
  EXPECT_TRUE(scaler.update(true));
  EXPECT_DOUBLE_EQ(scaler.scale(), 512.0);
  EXPECT_FALSE(scaler.update(false));
  EXPECT_DOUBLE_EQ(scaler.scale(), 512.0);
}

TEST(DynamicLossScaler, GrowsAfterGrowthIntervalCleanSteps) {
  DynamicLossScaler scaler({8.0, 3, 2.0, 0.5, 1.0});
  EXPECT_FALSE(scaler.update(false));
  EXPECT_FALSE(scaler.update(false));
  EXPECT_DOUBLE_EQ(scaler.scale(), 8.0);
  EXPECT_FALSE(scaler.update(false));
  EXPECT_DOUBLE_EQ(scaler.scale(), 16.0);
  // An overflow restarts the count.
  scaler.update(false);
  scaler.update(true);
  scaler.update(false);
  scaler.update(false);
  EXPECT_DOUBLE_EQ(scaler.scale(), 8.0);
}

TEST(DynamicLossScaler, NeverGoesBelowTheMinimumAndFailsThere) {
  DynamicLossScaler scaler({4.0, 100, 2.0, 0.25, 2.0});
  EXPECT_TRUE(scaler.update(true));
  EXPECT_DOUBLE_EQ(scaler.scale(), 2.0);
  try {
    scaler.update(true);
    FAIL() << "no error at the minimum scale";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("precision.min_loss_scale"), std::string::npos);
  }
}

}  // namespace
}  // namespace zt::optim
