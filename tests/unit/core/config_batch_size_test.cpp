// Tests of resolve_global_batch_size: inference, agreement, and the error for a global
// batch size that is not micro x accumulation x world.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/config/batch_size.h"
#include "core/config/config_loader.h"
#include "core/error.h"

namespace zt {
namespace {

Config batches(std::int64_t micro, std::int64_t accum, std::int64_t global) {
  Config config = default_config();
  config.source = "t.toml";
  config.train.micro_batch_size = micro;
  config.train.grad_accum_steps = accum;
  config.train.global_batch_size = global;
  return config;
}

TEST(ConfigBatchSize, ZeroIsInferredFromMicroAccumulationAndWorld) {
  EXPECT_EQ(resolve_global_batch_size(batches(32, 1, 0), 1), 32);
  EXPECT_EQ(resolve_global_batch_size(batches(8, 4, 0), 3), 96);
}

TEST(ConfigBatchSize, MatchingValueIsAccepted) {
  EXPECT_EQ(resolve_global_batch_size(batches(8, 4, 64), 2), 64);
}

TEST(ConfigBatchSize, MismatchNamesKeyAndProduct) {
  try {
    resolve_global_batch_size(batches(32, 1, 96), 2);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "t.toml: train.global_batch_size: 96 does not equal train.micro_batch_size (32) x "
              "train.grad_accum_steps (1) x world size (2) = 64; set it to 64, or to 0 to "
              "infer it");
  }
}

TEST(ConfigBatchSize, OverflowIsAnError) {
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_THROW(resolve_global_batch_size(batches(huge, 3, 0), 1), ConfigError);
}

}  // namespace
}  // namespace zt
