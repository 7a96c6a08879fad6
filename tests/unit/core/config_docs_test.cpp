// Tests of the schema's outputs: docs/CONFIG.md is current and covers every key, and the
// effective-config TOML reads back to the same Config.
#include "core/config/config_docs.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "core/config/config_loader.h"
#include "core/config/config_schema.h"
#include "core/config/config_writer.h"
#include "support/test_paths.h"

namespace zt {
namespace {

// "line N", the first line where `a` and `b` differ, to point at the stale entry.
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) {
    if (a[i] == '\n') ++line;
  }
  return "line " + std::to_string(line);
}

TEST(ConfigDocs, CommittedFileMatchesTheSchema) {
  const std::string path = zt::testing::source_dir() + "/docs/CONFIG.md";
  std::ifstream file(path, std::ios::binary);
  ASSERT_TRUE(file.is_open()) << path << " is missing. Regenerate it from the repo root with:\n"
                              << "  build/default/apps/zerotrain config docs > docs/CONFIG.md";
  const std::string committed{std::istreambuf_iterator<char>(file),
                              std::istreambuf_iterator<char>()};
  // Not EXPECT_EQ: a diff of the whole file buries the one line that says what to do.
  const std::string generated = config_reference_markdown();
  EXPECT_TRUE(committed == generated)
      << path << " is out of date with core/config/config_schema.cpp (first difference at "
      << first_difference(committed, generated) << "). Regenerate it from the repo root "
      << "with:\n  build/default/apps/zerotrain config docs > docs/CONFIG.md";
}

TEST(ConfigDocs, ListEveryKeyWithItsDefault) {
  const std::string markdown = config_reference_markdown();
  EXPECT_NE(markdown.find("zerotrain config docs > docs/CONFIG.md"), std::string::npos);
  for (const SectionSpec& section : config_schema()) {
    EXPECT_NE(markdown.find("## [" + section.name + "]"), std::string::npos) << section.name;
    for (const KeySpec& key : section.keys) {
      EXPECT_NE(markdown.find("| `" + key.full_name() + "` |"), std::string::npos)
          << key.full_name();
    }
  }
  EXPECT_NE(markdown.find("| `zero.reduce_bucket_size` | size | `\"25 MiB\"` | bytes; >= 1 KiB |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| `optimizer.lr` | float | `0.001` | > 0 and <= 10 |"),
            std::string::npos);
}

TEST(ConfigToToml, DefaultsRoundTrip) {
  const Config original = default_config();
  const std::string text = config_to_toml(original);
  Config reread = parse_config_text(text, "effective.toml", {});
  reread.source = original.source;
  EXPECT_EQ(reread, original) << text;
  EXPECT_NE(text.find("reduce_bucket_size = \"25 MiB\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("eps = 1e-8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("comm_timeout_s = 300.0\n"), std::string::npos) << text;
}

TEST(ConfigToToml, NonDefaultValuesRoundTripExactly) {
  Config original = default_config();
  original.source = "weird\nsource.toml";
  original.run.dir = "runs/\"quoted\" \\ back\ttab\nnewline \x01 \xc3\xa9";
  original.run.seed = 9'007'199'254'740'993;  // not representable as a double
  original.data.path = "";
  original.optimizer.type = OptimizerType::kAdam;
  original.optimizer.lr = 0.1;
  original.optimizer.beta2 = 0.30000000000000004;
  original.optimizer.eps = 4.9406564584124654e-324;
  original.optimizer.nesterov = true;
  original.precision.dtype = PrecisionDType::kBf16;
  original.zero.stage = 2;
  original.zero.reduce_bucket_size_bytes = 1500;
  original.runtime.device = DeviceKind::kCuda;
  original.runtime.device_memory_limit_bytes = 9'223'372'036'854'775'807;
  original.runtime.comm_timeout_s = 1e300;
  const std::string text = config_to_toml(original);
  Config reread = parse_config_text(text, "effective.toml", {});
  reread.source = original.source;
  EXPECT_EQ(reread, original) << text;
  EXPECT_NE(text.find("reduce_bucket_size = 1500\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace zt
