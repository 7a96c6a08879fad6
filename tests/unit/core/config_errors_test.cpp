// Tests that every kind of bad config file is refused with a message that names the file,
// line, column and key, and suggests the nearest valid key or section where one is close.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/config/config_loader.h"
#include "core/error.h"

namespace zt {
namespace {

// The message of the ConfigError that parsing `text` as "t.toml" throws.
std::string error_of(std::string_view text) {
  try {
    parse_config_text(text, "t.toml", {});
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return {};
}

TEST(ConfigErrors, UnknownTopLevelKeySuggestsItsSection) {
  EXPECT_EQ(error_of("lr = 0.1\n"), "t.toml:1:1: unknown key 'lr'; did you mean 'optimizer.lr'?");
}

TEST(ConfigErrors, UnknownTopLevelKeyWithNothingCloseHasNoSuggestion) {
  EXPECT_EQ(error_of("colour = \"red\"\n"), "t.toml:1:1: unknown key 'colour'");
}

TEST(ConfigErrors, UnknownSectionSuggestsNearest) {
  EXPECT_EQ(error_of("[optimiser]\nlr = 0.1\n"),
            "t.toml:1:2: unknown section 'optimiser'; did you mean 'optimizer'?");
}

TEST(ConfigErrors, PlannedSectionWithoutKeysIsRefused) {
  EXPECT_EQ(error_of("[train]\nsteps = 3\n\n[profile]\ndir = \"p\"\n"),
            "t.toml:4:2: unknown section 'profile': it is planned but has no keys in "
            "this version");
  EXPECT_NE(error_of("[profile]\n").find("unknown section 'profile'"), std::string::npos);
}

TEST(ConfigErrors, RemovedKeySaysWhatReplacedIt) {
  const std::string removed =
      "train.eval_batches was removed: the validation set is now train.eval_windows windows "
      "over all ranks";
  const std::string in_file = error_of("[train]\neval_batches = 4\n");
  EXPECT_EQ(in_file.rfind("t.toml:2:1: " + removed, 0), 0u) << in_file;
  EXPECT_NE(in_file.find("set train.eval_windows = eval_batches x micro_batch_size x world size"),
            std::string::npos)
      << in_file;
  try {
    parse_config_text("", "t.toml", {"train.eval_batches=4"});
    ADD_FAILURE() << "no ConfigError for --set train.eval_batches=4";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("--set train.eval_batches=4: " + removed, 0), 0u)
        << error.what();
  }
}

TEST(ConfigErrors, UnknownKeyInSectionSuggestsAlias) {
  EXPECT_EQ(error_of("[optimizer]\ntype = \"sgd\"\nlearning_rate = 0.1\n"),
            "t.toml:3:1: unknown key 'optimizer.learning_rate'; did you mean 'optimizer.lr'?");
}

TEST(ConfigErrors, MisspelledKeySuggestsNearest) {
  EXPECT_EQ(error_of("[optimizer]\nmomentun = 0.5\n"),
            "t.toml:2:1: unknown key 'optimizer.momentun'; did you mean 'optimizer.momentum'?");
  EXPECT_EQ(error_of("[zero]\nreduce_bucket_size_bytes = 1024\n"),
            "t.toml:2:1: unknown key 'zero.reduce_bucket_size_bytes'; did you mean "
            "'zero.reduce_bucket_size'?");
}

TEST(ConfigErrors, MisplacedKeySuggestsTheRightSection) {
  EXPECT_EQ(error_of("[train]\nlr = 0.1\n"),
            "t.toml:2:1: unknown key 'train.lr'; did you mean 'optimizer.lr'?");
  EXPECT_EQ(error_of("[run]\nstage = 2\n"),
            "t.toml:2:1: unknown key 'run.stage'; did you mean 'zero.stage'?");
}

TEST(ConfigErrors, UnknownKeyWithNothingCloseHasNoSuggestion) {
  EXPECT_EQ(error_of("[train]\nwibble = 1\n"), "t.toml:2:1: unknown key 'train.wibble'");
}

TEST(ConfigErrors, StringForFloatNamesBothTypes) {
  EXPECT_EQ(error_of("[optimizer]\nlr = \"fast\"\n"),
            "t.toml:2:6: optimizer.lr: expected a float, got a string (\"fast\")");
}

TEST(ConfigErrors, FloatForIntIsRefused) {
  EXPECT_EQ(error_of("[train]\nsteps = 10.5\n"),
            "t.toml:2:9: train.steps: expected an integer, got a float (10.5)");
  EXPECT_EQ(error_of("[train]\nsteps = 10.0\n"),
            "t.toml:2:9: train.steps: expected an integer, got a float (10.0)");
}

TEST(ConfigErrors, IntForBoolIsRefused) {
  EXPECT_EQ(error_of("[optimizer]\nnesterov = 1\n"),
            "t.toml:2:12: optimizer.nesterov: expected a boolean (true or false), got an "
            "integer (1)");
}

TEST(ConfigErrors, NegativeLearningRateShowsRange) {
  EXPECT_EQ(error_of("[optimizer]\nlr = -0.1\n"),
            "t.toml:2:6: optimizer.lr: expected a float > 0 and <= 10, got -0.1");
}

TEST(ConfigErrors, ZeroStageFourShowsRange) {
  EXPECT_EQ(error_of("[zero]\nstage = 4\n"),
            "t.toml:2:9: zero.stage: expected an integer >= 0 and <= 3, got 4");
}

TEST(ConfigErrors, Beta1OfOneIsOutsideHalfOpenRange) {
  EXPECT_EQ(error_of("[optimizer]\nbeta1 = 1.0\n"),
            "t.toml:2:9: optimizer.beta1: expected a float >= 0 and < 1, got 1.0");
}

TEST(ConfigErrors, NonFiniteFloatIsOutOfRange) {
  EXPECT_EQ(error_of("[optimizer]\neps = inf\n"),
            "t.toml:2:7: optimizer.eps: expected a float > 0, got inf");
  EXPECT_EQ(error_of("[optimizer]\nlr = nan\n"),
            "t.toml:2:6: optimizer.lr: expected a float > 0 and <= 10, got nan");
}

TEST(ConfigErrors, BadEnumListsAllowedValues) {
  EXPECT_EQ(error_of("[optimizer]\ntype = \"AdamW\"\n"),
            "t.toml:2:8: optimizer.type: expected one of \"sgd\", \"adam\", \"adamw\", got "
            "\"AdamW\"; did you mean \"adamw\"?");
  EXPECT_EQ(error_of("[precision]\ndtype = \"int8\"\n"),
            "t.toml:2:9: precision.dtype: expected one of \"fp32\", \"bf16\", \"fp16\", got "
            "\"int8\"");
}

TEST(ConfigErrors, BadSizeStringNamesAcceptedForms) {
  EXPECT_EQ(error_of("[zero]\nreduce_bucket_size = \"12XB\"\n"),
            "t.toml:2:22: zero.reduce_bucket_size: expected a size: a byte count as an "
            "integer, or a string like \"512MiB\", \"8GB\", \"1.5GiB\", \"100B\" (units B, KB, "
            "MB, GB, TB, KiB, MiB, GiB, TiB), got a string (\"12XB\")");
  EXPECT_NE(error_of("[runtime]\ndevice_memory_limit = 1.5\n")
                .find("runtime.device_memory_limit: expected a size: "),
            std::string::npos);
}

TEST(ConfigErrors, SizeOutOfRangeShowsRangeInUnits) {
  EXPECT_EQ(error_of("[zero]\nreduce_bucket_size = \"512B\"\n"),
            "t.toml:2:22: zero.reduce_bucket_size: expected a size >= 1 KiB, got 512 B");
  EXPECT_EQ(error_of("[runtime]\ndevice_memory_limit = -5\n"),
            "t.toml:2:23: runtime.device_memory_limit: expected a size >= 0 B, got -5 B");
}

TEST(ConfigErrors, SyntaxErrorHasPosition) {
  const std::string message = error_of("[train]\nsteps = = 3\n");
  EXPECT_EQ(message.rfind("t.toml:2:9: syntax error: ", 0), 0u) << message;
}

TEST(ConfigErrors, DuplicateKeyIsSyntaxError) {
  const std::string message = error_of("[train]\nsteps = 3\nsteps = 4\n");
  EXPECT_EQ(message.rfind("t.toml:3:", 0), 0u) << message;
  EXPECT_NE(message.find(": syntax error: "), std::string::npos) << message;
  EXPECT_NE(message.find("'steps'"), std::string::npos) << message;
}

TEST(ConfigErrors, SectionGivenAsScalar) {
  EXPECT_EQ(error_of("optimizer = \"adam\"\n"),
            "t.toml:1:13: 'optimizer' must be a table (a [optimizer] section), got a string "
            "(\"adam\")");
}

TEST(ConfigErrors, SectionGivenAsArrayOfTables) {
  EXPECT_EQ(error_of("[[train]]\nsteps = 3\n"),
            "t.toml:1:1: 'train' must be a table (a [train] section), got an array");
}

TEST(ConfigErrors, NestedUnknownTable) {
  EXPECT_EQ(error_of("[optimizer.adam]\nbeta1 = 0.9\n"),
            "t.toml:1:12: unknown table 'optimizer.adam'");
  EXPECT_EQ(error_of("[train]\nschedule.warmup = 3\n"),
            "t.toml:2:1: unknown table 'train.schedule'");
}

TEST(ConfigErrors, KeyGivenAsTable) {
  EXPECT_EQ(error_of("[optimizer.lr]\nvalue = 0.1\n"),
            "t.toml:1:1: optimizer.lr: expected a float, got a table");
}

TEST(ConfigErrors, ArrayForIntNamesTheArray) {
  EXPECT_EQ(error_of("[run]\nseed = [1, 2]\n"),
            "t.toml:2:8: run.seed: expected an integer, got an array");
}

TEST(ConfigErrors, MissingFileNamesThePath) {
  try {
    load_config_file("/nonexistent/zt/tiny.toml", {});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "/nonexistent/zt/tiny.toml: cannot read config file: no such file");
  }
}

TEST(ConfigErrors, ConfigErrorExitsWithUsageCode) {
  try {
    parse_config_text("[zero]\nstage = 9\n", "t.toml", {});
    FAIL() << "no ConfigError";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), kExitUsage);
  }
}

}  // namespace
}  // namespace zt
