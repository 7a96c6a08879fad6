// Tests of parse_byte_size and format_byte_size: every accepted form, the refusals
// (negative, junk, overflow, fractions of a byte) and exact round trips.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/config/byte_size.h"

namespace zt {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;
constexpr std::int64_t kTiB = 1024 * kGiB;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct SizeCase {
  const char* text;
  std::optional<std::int64_t> bytes;
};

TEST(ByteSize, ParsesEveryUnitAndForm) {
  const SizeCase cases[] = {
      {"0", 0},
      {"100B", 100},
      {"100", 100},
      {"64KiB", 64 * kKiB},
      {"512MiB", 512 * kMiB},
      {"1.5GiB", 3 * kGiB / 2},
      {"2TiB", 2 * kTiB},
      {"1KB", 1000},
      {"8GB", 8'000'000'000},
      {"3MB", 3'000'000},
      {"1TB", 1'000'000'000'000},
      {"25 MiB", 25 * kMiB},
      {"  7 kib ", 7 * kKiB},
      {"1mib", kMiB},
      {"1GIB", kGiB},
      {"0.5KB", 500},
      {"1.0", 1},
      {"0KiB", 0},
      {"9223372036854775807", kMax},
      {"9223372036854775807B", kMax},
      {"8388607TiB", 8388607 * kTiB},
  };
  for (const SizeCase& c : cases) {
    EXPECT_EQ(parse_byte_size(c.text), c.bytes) << "text: '" << c.text << "'";
  }
}

TEST(ByteSize, FractionsRoundDownToWholeBytes) {
  EXPECT_EQ(parse_byte_size("1.1KiB"), 1126);  // 1126.4
  EXPECT_EQ(parse_byte_size("0.001KiB"), 1);   // 1.024
  EXPECT_EQ(parse_byte_size("0.0001KiB"), 0);  // 0.1024
  EXPECT_EQ(parse_byte_size("1.333333333333333333333333GB"), 1'333'333'333);
}

TEST(ByteSize, RefusesNegativeJunkAndOverflow) {
  const char* bad[] = {
      "",
      " ",
      "-1",
      "-1KiB",
      "abc",
      "1XB",
      "1.5",
      "1.5B",
      "1e3",
      ".5KiB",
      "5.KiB",
      "+1",
      "1 K iB",
      "1KiBs",
      "KiB",
      "1,000",
      "0x10",
      "1..5MiB",
      "9223372036854775808",
      "8388608TiB",
      "99999999999999999999",
      "1 2",
      "9223372036854775807KB",
  };
  for (const char* text : bad) {
    EXPECT_EQ(parse_byte_size(text), std::nullopt) << "text: '" << text << "'";
  }
}

TEST(ByteSize, FormatsExactWholeUnitsPreferringBinary) {
  EXPECT_EQ(format_byte_size(0), "0 B");
  EXPECT_EQ(format_byte_size(100), "100 B");
  EXPECT_EQ(format_byte_size(1023), "1023 B");
  EXPECT_EQ(format_byte_size(kKiB), "1 KiB");
  EXPECT_EQ(format_byte_size(25 * kMiB), "25 MiB");
  EXPECT_EQ(format_byte_size(3 * kGiB), "3 GiB");
  EXPECT_EQ(format_byte_size(2 * kTiB), "2 TiB");
  EXPECT_EQ(format_byte_size(1000), "1 KB");
  EXPECT_EQ(format_byte_size(8'000'000'000), "8 GB");
  EXPECT_EQ(format_byte_size(1000 * kKiB), "1000 KiB");
}

TEST(ByteSize, FormatsOtherSizesToThreeSignificantDigits) {
  EXPECT_EQ(format_byte_size(1500), "1.46 KiB");
  EXPECT_EQ(format_byte_size(15 * kMiB + 1), "15.0 MiB");
  EXPECT_EQ(format_byte_size(150 * kMiB + 1), "150 MiB");
  EXPECT_EQ(format_byte_size(-1500), "-1.46 KiB");
  EXPECT_EQ(format_byte_size(std::numeric_limits<std::int64_t>::min()), "-8388608 TiB");
}

TEST(ByteSize, ExactFormsParseBack) {
  for (const std::int64_t bytes : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}, kKiB,
                                   25 * kMiB, 7 * kGiB, 8'000'000'000, 3 * kTiB}) {
    EXPECT_EQ(parse_byte_size(format_byte_size(bytes)), bytes) << format_byte_size(bytes);
  }
}

}  // namespace
}  // namespace zt
