// Tests of valid configs: the defaults, every key landing in its field, integer-for-float,
// size forms, and reading a real file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/config/config_enums.h"
#include "core/config/config_loader.h"
#include "core/config/config_schema.h"
#include "core/error.h"

namespace zt {
namespace {

// Models never share a default run.dir, so one model's run cannot claim another's results.
TEST(ConfigDefaults, RunDirFollowsTheModelUnlessGiven) {
  EXPECT_EQ(parse_config_text("", "e.toml", {}).run.dir, "runs/mlp");
  EXPECT_EQ(parse_config_text("[model]\ntype = \"gpt\"\n", "g.toml", {}).run.dir, "runs/gpt");
  EXPECT_EQ(parse_config_text("", "e.toml", {"model.type=gpt"}).run.dir, "runs/gpt");
  EXPECT_EQ(parse_config_text("[run]\ndir = \"\"\n[model]\ntype = \"gpt\"\n", "g.toml", {}).run.dir,
            "runs/gpt");
  EXPECT_EQ(parse_config_text("[run]\ndir = \"mine\"\n", "m.toml", {"model.type=gpt"}).run.dir,
            "mine");
}

TEST(ConfigDefaults, MatchTheDocumentedValues) {
  const Config c = default_config();
  EXPECT_EQ(c.source, "<defaults>");
  EXPECT_EQ(c.run.dir, "runs/mlp");
  EXPECT_FALSE(c.run.overwrite);
  EXPECT_EQ(c.run.seed, 1234);
  EXPECT_EQ(c.run.log_every, 10);
  EXPECT_EQ(c.model.type, ModelType::kMlp);
  EXPECT_EQ(c.model.input_dim, 32);
  EXPECT_EQ(c.model.hidden_dim, 128);
  EXPECT_EQ(c.model.num_classes, 10);
  EXPECT_EQ(c.data.path, "");
  EXPECT_EQ(c.train.steps, 200);
  EXPECT_EQ(c.train.micro_batch_size, 0);  // inferred at start (resolve_batch_sizes)
  EXPECT_EQ(c.train.grad_accum_steps, 0);
  EXPECT_EQ(c.train.global_batch_size, 0);
  EXPECT_EQ(c.optimizer.type, OptimizerType::kAdamW);
  EXPECT_EQ(c.optimizer.lr, 1e-3);
  EXPECT_EQ(c.optimizer.momentum, 0.9);
  EXPECT_FALSE(c.optimizer.nesterov);
  EXPECT_EQ(c.optimizer.beta1, 0.9);
  EXPECT_EQ(c.optimizer.beta2, 0.999);
  EXPECT_EQ(c.optimizer.eps, 1e-8);
  EXPECT_EQ(c.optimizer.weight_decay, 0.0);
  EXPECT_EQ(c.precision.dtype, PrecisionDType::kFp32);
  EXPECT_EQ(c.zero.stage, 0);
  EXPECT_EQ(c.zero.reduce_bucket_size_bytes, 25 * 1024 * 1024);
  EXPECT_EQ(c.runtime.device, DeviceKind::kCpu);
  EXPECT_EQ(c.runtime.device_memory_limit_bytes, 0);
  EXPECT_EQ(c.runtime.blas_threads, 0);
  EXPECT_EQ(c.runtime.comm_timeout_s, 300.0);
}

TEST(ConfigDefaults, EmptyTextGivesDefaultsWithItsSource) {
  Config expected = default_config();
  expected.source = "empty.toml";
  EXPECT_EQ(parse_config_text("", "empty.toml", {}), expected);
  EXPECT_EQ(parse_config_text("# only a comment\n[train]\n", "empty.toml", {}), expected);
}

TEST(ConfigSchema, EveryKeyIsDocumentedAndItsDefaultValid) {
  std::size_t keys = 0;
  for (const SectionSpec& section : config_schema()) {
    EXPECT_FALSE(section.doc.empty()) << section.name;
    for (const KeySpec& key : section.keys) {
      ++keys;
      EXPECT_EQ(key.section, section.name);
      EXPECT_FALSE(key.doc.empty()) << key.full_name();
      EXPECT_EQ(check_key_value(key, key.default_value), std::nullopt) << key.full_name();
      EXPECT_EQ(find_config_key(section.name, key.name), &key);
    }
  }
  // A key added or removed changes this on purpose: docs/CONFIG.md and the loader follow.
  EXPECT_EQ(keys, 88u);
  EXPECT_EQ(find_config_key("optimizer", "learning_rate"), nullptr);
  EXPECT_EQ(find_config_section("profile"), nullptr);
}

TEST(ConfigSchema, EnumNamesAreTheFileNames) {
  EXPECT_EQ(config_name(OptimizerType::kAdamW), "adamw");
  EXPECT_EQ(config_name(PrecisionDType::kBf16), "bf16");
  EXPECT_EQ(config_name(DeviceKind::kCuda), "cuda");
  EXPECT_EQ(config_name(ModelType::kMlp), "mlp");
  EXPECT_EQ(config_name(ModelType::kLlama), "llama");
}

TEST(ConfigLoading, EveryKeyLandsInItsField) {
  const Config c = parse_config_text(R"(
[run]
dir = "runs/x"
seed = 7
log_every = 3
[model]
type = "mlp"
input_dim = 4
hidden_dim = 5
num_classes = 2
[data]
path = "data/tokens.bin"
[train]
steps = 11
micro_batch_size = 8
grad_accum_steps = 2
global_batch_size = 32
[optimizer]
type = "sgd"
lr = 0.5
momentum = 0.0
nesterov = true
beta1 = 0.8
beta2 = 0.99
eps = 1e-6
weight_decay = 0.01
[precision]
dtype = "bf16"
[zero]
stage = 3
reduce_bucket_size = "1.5MiB"
[runtime]
device = "cuda"
device_memory_limit = "8GB"
blas_threads = 2
comm_timeout_s = 12.5
)",
                                     "all.toml", {});
  EXPECT_EQ(c.source, "all.toml");
  EXPECT_EQ(c.run.dir, "runs/x");
  EXPECT_EQ(c.run.seed, 7);
  EXPECT_EQ(c.run.log_every, 3);
  EXPECT_EQ(c.model.input_dim, 4);
  EXPECT_EQ(c.model.hidden_dim, 5);
  EXPECT_EQ(c.model.num_classes, 2);
  EXPECT_EQ(c.data.path, "data/tokens.bin");
  EXPECT_EQ(c.train.steps, 11);
  EXPECT_EQ(c.train.micro_batch_size, 8);
  EXPECT_EQ(c.train.grad_accum_steps, 2);
  EXPECT_EQ(c.train.global_batch_size, 32);
  EXPECT_EQ(c.optimizer.type, OptimizerType::kSgd);
  EXPECT_EQ(c.optimizer.lr, 0.5);
  EXPECT_EQ(c.optimizer.momentum, 0.0);
  EXPECT_TRUE(c.optimizer.nesterov);
  EXPECT_EQ(c.optimizer.beta1, 0.8);
  EXPECT_EQ(c.optimizer.beta2, 0.99);
  EXPECT_EQ(c.optimizer.eps, 1e-6);
  EXPECT_EQ(c.optimizer.weight_decay, 0.01);
  EXPECT_EQ(c.precision.dtype, PrecisionDType::kBf16);
  EXPECT_EQ(c.zero.stage, 3);
  EXPECT_EQ(c.zero.reduce_bucket_size_bytes, 1536 * 1024);
  EXPECT_EQ(c.runtime.device, DeviceKind::kCuda);
  EXPECT_EQ(c.runtime.device_memory_limit_bytes, 8'000'000'000);
  EXPECT_EQ(c.runtime.blas_threads, 2);
  EXPECT_EQ(c.runtime.comm_timeout_s, 12.5);
}

TEST(ConfigLoading, IntegerIsAcceptedForFloat) {
  const Config c =
      parse_config_text("[optimizer]\nlr = 1\n[runtime]\ncomm_timeout_s = 60\n", "t.toml", {});
  EXPECT_EQ(c.optimizer.lr, 1.0);
  EXPECT_EQ(c.runtime.comm_timeout_s, 60.0);
}

TEST(ConfigLoading, SizeAcceptsIntegerBytesAndUnitStrings) {
  auto bucket = [](const std::string& value) {
    return parse_config_text("[zero]\nreduce_bucket_size = " + value + "\n", "t.toml", {})
        .zero.reduce_bucket_size_bytes;
  };
  EXPECT_EQ(bucket("4096"), 4096);
  EXPECT_EQ(bucket("\"64KiB\""), 64 * 1024);
  EXPECT_EQ(bucket("\"2 mib\""), 2 * 1024 * 1024);
  EXPECT_EQ(bucket("\"1GB\""), 1'000'000'000);
  EXPECT_EQ(bucket("\"1024\""), 1024);
}

TEST(ConfigLoading, DottedAndInlineTablesAreSections) {
  const Config c = parse_config_text("optimizer.lr = 0.25\ntrain = { steps = 5 }\n", "t.toml", {});
  EXPECT_EQ(c.optimizer.lr, 0.25);
  EXPECT_EQ(c.train.steps, 5);
}

TEST(ConfigLoading, ReadsFileAndNamesItAsSource) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "zt_config_loading_test.toml";
  {
    std::ofstream file(path);
    file << "[train]\nsteps = 42\n[optimizer]\nlr = -1\n";
  }
  try {
    load_config_file(path, {});
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              path.string() + ":4:6: optimizer.lr: expected a float > 0 and <= 10, got -1.0");
  }
  {
    std::ofstream file(path);
    file << "[train]\nsteps = 42\n";
  }
  const Config c = load_config_file(path, {"train.steps=43"});
  EXPECT_EQ(c.source, path.string());
  EXPECT_EQ(c.train.steps, 43);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace zt
