// Learning-rate schedules against their closed forms.
#include "optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace zt::optim {
namespace {

SchedulerConfig schedule(SchedulerType type, std::int64_t warmup, double floor) {
  SchedulerConfig config;
  config.type = type;
  config.warmup_steps = warmup;
  config.min_lr_ratio = floor;
  return config;
}

TEST(LrSchedule, ConstantIgnoresTheStep) {
  const auto s = schedule(SchedulerType::kConstant, 0, 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 0.1, 1, 100), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(s, 0.1, 100, 100), 0.1);
}

TEST(LrSchedule, WarmupRampsLinearlyThenHolds) {
  const auto s = schedule(SchedulerType::kWarmup, 10, 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 1, 100), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 5, 100), 0.5);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 10, 100), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 50, 100), 1.0);
}

TEST(LrSchedule, CosineDecaysToTheFloorAtTheLastStep) {
  const auto s = schedule(SchedulerType::kWarmupCosine, 10, 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(s, 2.0, 10, 110), 2.0);
  const double mid = learning_rate(s, 2.0, 60, 110);  // p = 0.5: halfway between 1 and floor
  EXPECT_NEAR(mid, 2.0 * (0.1 + 0.9 * 0.5), 1e-12);
  EXPECT_NEAR(learning_rate(s, 2.0, 35, 110),
              2.0 * (0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * 0.25))), 1e-12);
  EXPECT_NEAR(learning_rate(s, 2.0, 110, 110), 0.2, 1e-12);
}

TEST(LrSchedule, LinearDecaysToTheFloor) {
  const auto s = schedule(SchedulerType::kWarmupLinear, 0, 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 25, 100), 0.75);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 100, 100), 0.0);
}

TEST(LrSchedule, WarmupLongerThanTheRunNeverDivides) {
  const auto s = schedule(SchedulerType::kWarmupCosine, 50, 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.0, 10, 10), 0.2);
}

}  // namespace
}  // namespace zt::optim
