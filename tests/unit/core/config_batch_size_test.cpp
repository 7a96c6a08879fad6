// resolve_batch_sizes: any two of micro, accumulation and global determine the third, and
// disagreements show the arithmetic and the key to change.
#include <gtest/gtest.h>

#include <limits>

#include "core/config/batch_size.h"
#include "core/config/config_loader.h"
#include "core/error.h"

namespace zt {
namespace {

Config batches(std::int64_t micro, std::int64_t accum, std::int64_t global) {
  Config config;
  config.source = "b.toml";
  config.train.micro_batch_size = micro;
  config.train.grad_accum_steps = accum;
  config.train.global_batch_size = global;
  return config;
}

std::string error_of(const Config& config, std::int64_t world) {
  try {
    resolve_batch_sizes(config, world);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigBatchSize, MicroAndAccumulationGiveTheGlobalBatch) {
  const BatchSizes sizes = resolve_batch_sizes(batches(8, 4, 0), 3);
  EXPECT_EQ(sizes.global_batch_size, 96);
  EXPECT_NE(sizes.inferred.find("train.global_batch_size = 96"), std::string::npos);
}

TEST(ConfigBatchSize, GlobalAndMicroGiveTheAccumulation) {
  const BatchSizes sizes = resolve_batch_sizes(batches(8, 0, 64), 2);
  EXPECT_EQ(sizes.grad_accum_steps, 4);
  EXPECT_NE(sizes.inferred.find("train.grad_accum_steps = 4"), std::string::npos) << sizes.inferred;
}

TEST(ConfigBatchSize, GlobalAndAccumulationGiveTheMicroBatch) {
  const BatchSizes sizes = resolve_batch_sizes(batches(0, 2, 64), 4);
  EXPECT_EQ(sizes.micro_batch_size, 8);
  const BatchSizes only_global = resolve_batch_sizes(batches(0, 0, 64), 4);
  EXPECT_EQ(only_global.micro_batch_size, 16);
  EXPECT_EQ(only_global.grad_accum_steps, 1);
}

TEST(ConfigBatchSize, NothingGivenUsesTheDefaultMicroBatch) {
  const BatchSizes sizes = resolve_batch_sizes(batches(0, 0, 0), 2);
  EXPECT_EQ(sizes.micro_batch_size, kDefaultMicroBatchSize);
  EXPECT_EQ(sizes.global_batch_size, 2 * kDefaultMicroBatchSize);
}

TEST(ConfigBatchSize, AllThreeMustAgreeAndTheErrorShowsTheArithmetic) {
  EXPECT_EQ(resolve_batch_sizes(batches(8, 4, 64), 2).global_batch_size, 64);
  EXPECT_EQ(error_of(batches(32, 1, 96), 2),
            "b.toml: train.global_batch_size = 96 does not equal train.micro_batch_size 32 x "
            "train.grad_accum_steps 1 x world size 2 = 64; set train.global_batch_size = 64, or "
            "leave one of the three at 0 to have it inferred");
}

TEST(ConfigBatchSize, AGlobalBatchThatDoesNotDivideNamesTheKeyToChange) {
  const std::string message = error_of(batches(8, 0, 60), 4);
  EXPECT_NE(message.find("cannot infer train.grad_accum_steps"), std::string::npos) << message;
  EXPECT_NE(message.find("60 / 32"), std::string::npos) << message;
  EXPECT_NE(error_of(batches(0, 3, 10), 2).find("train.micro_batch_size"), std::string::npos);
}

TEST(ConfigBatchSize, OverflowIsAConfigError) {
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_NE(error_of(batches(huge, 3, 0), 1).find("too large"), std::string::npos);
}

// A batch-size disagreement names where train.global_batch_size was set: the file's line
// and column, or the --set that gave it.
TEST(BatchSizes, DisagreementNamesWhereTheGlobalBatchWasSet) {
  const Config from_file = parse_config_text(
      "[train]\nmicro_batch_size = 8\ngrad_accum_steps = 1\nglobal_batch_size = 7\n", "t.toml", {});
  EXPECT_EQ(error_of(from_file, 1).rfind("t.toml:4:21: train.global_batch_size = 7 does not", 0),
            0u)
      << error_of(from_file, 1);
  const Config from_set = parse_config_text("[train]\nmicro_batch_size = 8\ngrad_accum_steps = 1\n",
                                            "t.toml", {"train.global_batch_size=7"});
  EXPECT_EQ(error_of(from_set, 1).rfind("--set train.global_batch_size=7: train.global", 0), 0u)
      << error_of(from_set, 1);
  const Config inferred =
      parse_config_text("[train]\nglobal_batch_size = 7\n", "t.toml",
                        {"train.grad_accum_steps=2", "train.micro_batch_size=0"});
  EXPECT_EQ(error_of(inferred, 1).rfind("t.toml:2:21: cannot infer train.micro_batch_size", 0), 0u)
      << error_of(inferred, 1);
}

}  // namespace
}  // namespace zt
