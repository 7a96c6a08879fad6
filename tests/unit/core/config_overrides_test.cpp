// Tests of --set overrides: every key type, bare words for string/enum/size keys, order
// after the file, and the errors (bad value, unknown key, malformed), named as --set ....
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/error.h"

namespace zt {
namespace {

Config with(const std::vector<std::string>& overrides) {
  return parse_config_text("", "t.toml", overrides);
}

std::string error_of(const std::vector<std::string>& overrides, std::string_view text = "") {
  try {
    parse_config_text(text, "t.toml", overrides);
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for --set " << overrides.back();
  return {};
}

TEST(ConfigOverrides, SetsEachType) {
  const Config c = with({"run.seed=99", "optimizer.lr=0.1", "optimizer.nesterov=true",
                         "run.dir=\"runs/quoted dir\"", "precision.dtype=\"fp16\"",
                         "zero.reduce_bucket_size=\"1MiB\"", "runtime.device_memory_limit=4096"});
  EXPECT_EQ(c.run.seed, 99);
  EXPECT_EQ(c.optimizer.lr, 0.1);
  EXPECT_TRUE(c.optimizer.nesterov);
  EXPECT_EQ(c.run.dir, "runs/quoted dir");
  EXPECT_EQ(c.precision.dtype, PrecisionDType::kFp16);
  EXPECT_EQ(c.zero.reduce_bucket_size_bytes, 1024 * 1024);
  EXPECT_EQ(c.runtime.device_memory_limit_bytes, 4096);
}

TEST(ConfigOverrides, AcceptsBareWordsForStringEnumAndSizeKeys) {
  const Config c =
      with({"run.dir=out/x", "optimizer.type=sgd", "zero.reduce_bucket_size=1MiB",
            "runtime.device_memory_limit=1.5 GiB", "data.path=2024", "data.path = tokens.bin "});
  EXPECT_EQ(c.run.dir, "out/x");
  EXPECT_EQ(c.optimizer.type, OptimizerType::kSgd);
  EXPECT_EQ(c.zero.reduce_bucket_size_bytes, 1024 * 1024);
  EXPECT_EQ(c.runtime.device_memory_limit_bytes, 1536LL * 1024 * 1024);
  EXPECT_EQ(c.data.path, "tokens.bin");
}

TEST(ConfigOverrides, DataPathTakesAnArrayOfPathsAndDataFormatItsLayout) {
  const Config c = with({"data.path=[\"a.bin\", \"shards/train_*.bin\"]", "data.format=llmc"});
  EXPECT_EQ(data_path_entries(c.data), (std::vector<std::string>{"a.bin", "shards/train_*.bin"}));
  EXPECT_EQ(c.data.format, DataFormat::kLlmc);
  EXPECT_EQ(data_path_entries(with({"data.path=one.bin"}).data),
            std::vector<std::string>{"one.bin"});
  EXPECT_TRUE(data_path_entries(with({}).data).empty());
  EXPECT_EQ(with({}).data.format, DataFormat::kAuto);
  const Config file = parse_config_text("[data]\npath = [\"x.bin\", \"y.bin\"]\n", "t.toml", {});
  EXPECT_EQ(data_path_entries(file.data), (std::vector<std::string>{"x.bin", "y.bin"}));
  EXPECT_NE(error_of({"data.path=[\"a.bin\", 3]"}).find("element 1 is an integer"),
            std::string::npos);
  EXPECT_NE(error_of({"data.path=[]"}).find("an empty array"), std::string::npos);
  EXPECT_NE(error_of({"data.format=gpt2"}).find("\"nanogpt\""), std::string::npos);
}

TEST(ConfigOverrides, IntegerIsAcceptedForFloat) {
  EXPECT_EQ(with({"runtime.comm_timeout_s=5"}).runtime.comm_timeout_s, 5.0);
}

TEST(ConfigOverrides, ApplyAfterTheFileInOrder) {
  const Config c = parse_config_text("[train]\nsteps = 10\nmicro_batch_size = 4\n", "t.toml",
                                     {"train.steps=20", "train.steps=30"});
  EXPECT_EQ(c.train.steps, 30);
  EXPECT_EQ(c.train.micro_batch_size, 4);
}

TEST(ConfigOverrides, DoNotMaskAnInvalidFileValue) {
  // The file is validated before the overrides: a bad value there is reported even if a
  // later --set would replace it, so the file never silently holds an invalid value.
  EXPECT_EQ(error_of({"zero.stage=1"}, "[zero]\nstage = 7\n"),
            "t.toml:2:9: zero.stage: expected an integer >= 0 and <= 3, got 7");
}

TEST(ConfigOverrides, InvalidValueIsNamedAsTheOverride) {
  EXPECT_EQ(error_of({"optimizer.lr=abc"}),
            "--set optimizer.lr=abc: optimizer.lr: expected a float > 0 and <= 10, got 'abc'");
  EXPECT_EQ(error_of({"optimizer.lr=-0.5"}),
            "--set optimizer.lr=-0.5: optimizer.lr: expected a float > 0 and <= 10, got -0.5");
  EXPECT_EQ(error_of({"optimizer.lr=\"fast\""}),
            "--set optimizer.lr=\"fast\": optimizer.lr: expected a float, got a string "
            "(\"fast\")");
  EXPECT_EQ(error_of({"train.steps=1.5"}),
            "--set train.steps=1.5: train.steps: expected an integer, got a float (1.5)");
  EXPECT_EQ(error_of({"optimizer.nesterov=1"}),
            "--set optimizer.nesterov=1: optimizer.nesterov: expected a boolean (true or "
            "false), got an integer (1)");
  EXPECT_EQ(error_of({"optimizer.type=lion"}),
            "--set optimizer.type=lion: optimizer.type: expected one of \"sgd\", \"adam\", "
            "\"adamw\", got \"lion\"");
}

TEST(ConfigOverrides, BadSizeNamesAcceptedForms) {
  const std::string message = error_of({"zero.reduce_bucket_size=lots"});
  EXPECT_EQ(message.rfind("--set zero.reduce_bucket_size=lots: zero.reduce_bucket_size: "
                          "expected a size: a byte count as an integer, or a string like",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("got 'lots'"), std::string::npos) << message;
  EXPECT_EQ(error_of({"zero.reduce_bucket_size=10"}),
            "--set zero.reduce_bucket_size=10: zero.reduce_bucket_size: expected a size >= 1 "
            "KiB, got 10 B");
}

TEST(ConfigOverrides, ValueCannotSmuggleInAnotherKey) {
  EXPECT_EQ(error_of({"optimizer.lr=0.1\nseed = 3"}),
            "--set optimizer.lr=0.1\nseed = 3: optimizer.lr: expected a float > 0 and <= 10, "
            "got '0.1\nseed = 3'");
}

TEST(ConfigOverrides, UnknownKeySuggestsNearest) {
  EXPECT_EQ(error_of({"optimizer.learning_rate=0.1"}),
            "--set optimizer.learning_rate=0.1: unknown key 'optimizer.learning_rate'; did you "
            "mean 'optimizer.lr'?");
  EXPECT_EQ(error_of({"train.lr=0.1"}),
            "--set train.lr=0.1: unknown key 'train.lr'; did you mean 'optimizer.lr'?");
  EXPECT_EQ(error_of({"optimiser.type=sgd"}),
            "--set optimiser.type=sgd: unknown key 'optimiser.type'; did you mean "
            "'optimizer.type'?");
  EXPECT_EQ(error_of({"lr=0.1"}), "--set lr=0.1: unknown key 'lr'; did you mean 'optimizer.lr'?");
  EXPECT_EQ(error_of({"train.wibble=1"}), "--set train.wibble=1: unknown key 'train.wibble'");
  EXPECT_EQ(error_of({"optimizer.lr.x=1"}), "--set optimizer.lr.x=1: unknown key 'optimizer.lr.x'");
}

TEST(ConfigOverrides, MalformedIsRefused) {
  EXPECT_EQ(error_of({"foo"}),
            "--set foo: expected section.key=value, as in --set optimizer.lr=0.01");
  EXPECT_EQ(error_of({"=3"}),
            "--set =3: expected section.key=value, as in --set optimizer.lr=0.01");
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

// Found by tests/fuzz/config_text_fuzzer: a --set string that is not UTF-8 was accepted and
// then written into a config.toml that TOML cannot read back.
TEST(ConfigOverrides, StringThatIsNotUtf8IsRefused) {
  try {
    parse_config_text("", "t.toml", {"run.dir=out/x\xf1t"});
    FAIL() << "accepted a string that is not UTF-8";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--set run.dir=out/x\xf1t: run.dir: expected UTF-8 text, got a string whose byte 5 "
              "is not valid UTF-8");
  }
  // Overlong forms, surrogates and truncated sequences too; real UTF-8 passes.
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80"}) {
    EXPECT_THROW(parse_config_text("", "t.toml", {std::string("data.path=") + bad}), ConfigError)
        << bad;
  }
  EXPECT_EQ(parse_config_text("", "t.toml", {"run.dir=runs/\xc3\xa9t\xc3\xa9"}).run.dir,
            "runs/\xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace zt
