// The schedule warnings: a warmup longer than the run names both keys with their values;
// a resume under another train.steps names both values when the schedule decays over it.
#include "optim/lr_schedule_warnings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config_loader.h"

namespace zt::optim {
namespace {

Config config_with(std::vector<std::string> overrides) {
  return parse_config_text("", "test.toml", overrides);
}

TEST(LrScheduleWarnings, WarmupLongerThanTheRunNamesBothKeysWithValues) {
  const std::optional<std::string> warning =
      warmup_outlasts_run_warning(config_with({"scheduler.warmup_steps=20", "train.steps=6"}));
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("scheduler.warmup_steps = 20"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("train.steps = 6"), std::string::npos) << *warning;
  EXPECT_EQ(warmup_outlasts_run_warning(config_with({"scheduler.warmup_steps=6", "train.steps=6"})),
            std::nullopt);
  EXPECT_EQ(warmup_outlasts_run_warning(config_with({"train.steps=6"})), std::nullopt);
}

TEST(LrScheduleWarnings, ResumeUnderAnotherTrainStepsNamesBothValuesWhenTheScheduleDecays) {
  for (const char* type : {"warmup_cosine", "warmup_linear"}) {
    const Config config = config_with({std::string("scheduler.type=") + type, "train.steps=600"});
    const std::optional<std::string> warning = resumed_schedule_warning(config, 300);
    ASSERT_TRUE(warning) << type;
    EXPECT_NE(warning->find("train.steps = 600"), std::string::npos) << *warning;
    EXPECT_NE(warning->find("train.steps = 300"), std::string::npos) << *warning;
    EXPECT_EQ(resumed_schedule_warning(config, 600), std::nullopt) << type;
  }
  // Schedules that do not depend on train.steps follow the same curve.
  for (const char* type : {"constant", "warmup"}) {
    EXPECT_EQ(resumed_schedule_warning(
                  config_with({std::string("scheduler.type=") + type, "train.steps=600"}), 300),
              std::nullopt)
        << type;
  }
}

}  // namespace
}  // namespace zt::optim
