// Bulk f32 <-> bf16 conversion: every path this CPU has gives the scalar conversion's bits
// (Note [bf16 conversion paths]), over a dense sample of f32 patterns (every sign, exponent and
// top mantissa bits, with low halves at and around the rounding ties, NaN payloads, infinities
// and denormals), every bf16 pattern, and the sizes around the vector widths.
#include "core/bf16_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace zt {
namespace {

std::string path_name(Bf16ConvertPath path) { return std::string(bf16_convert_path_name(path)); }

// The first f32 pattern at which `path` and the scalar conversion differ in `patterns`, as a
// message; empty when they all agree.
std::string first_f32_mismatch(Bf16ConvertPath path, const std::vector<std::uint32_t>& patterns) {
  std::vector<float> values(patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i) values[i] = std::bit_cast<float>(patterns[i]);
  std::vector<BF16> converted(patterns.size());
  f32_to_bf16(path, values.data(), converted.data(), values.size());
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::uint16_t expected = f32_to_bf16_bits(values[i]);
    if (converted[i].bits != expected) {
      char message[128];
      std::snprintf(message, sizeof(message), "f32 0x%08X (index %zu): got 0x%04X, want 0x%04X",
                    patterns[i], i, converted[i].bits, expected);
      return message;
    }
  }
  return "";
}

// Every high half (sign, exponent, 7 mantissa bits) with low halves that decide the rounding:
// zero, one, just below, at and above the tie, the largest; then seeded random ones.
std::vector<std::uint32_t> dense_f32_sample() {
  const std::uint32_t lows[] = {0x0000u, 0x0001u, 0x4000u, 0x7FFEu, 0x7FFFu,
                                0x8000u, 0x8001u, 0xC000u, 0xFFFEu, 0xFFFFu};
  std::mt19937 rng(20240530);
  std::uniform_int_distribution<std::uint32_t> low_dist(0, 0xFFFF);
  std::vector<std::uint32_t> patterns;
  patterns.reserve(std::size_t{1} << 20);
  for (std::uint32_t high = 0; high <= 0xFFFFu; ++high) {
    for (std::uint32_t low : lows) patterns.push_back(high << 16 | low);
    for (int r = 0; r < 6; ++r) patterns.push_back(high << 16 | low_dist(rng));
  }
  return patterns;
}

TEST(Bf16Convert, ScalarAndAtLeastTheBuildsPathsAreAvailable) {
  const std::vector<Bf16ConvertPath> paths = available_bf16_convert_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), Bf16ConvertPath::kScalar);
  EXPECT_EQ(best_bf16_convert_path(), paths.back());
  for (Bf16ConvertPath path : paths)
    std::printf("bf16 conversion path: %s\n", path_name(path).c_str());
}

TEST(Bf16Convert, EveryPathRoundsADenseSampleOfF32AsTheScalarConversion) {
  const std::vector<std::uint32_t> patterns = dense_f32_sample();
  for (Bf16ConvertPath path : available_bf16_convert_paths()) {
    EXPECT_EQ(first_f32_mismatch(path, patterns), "") << "path " << path_name(path);
  }
}

TEST(Bf16Convert, EveryPathKeepsDenormalsNaNPayloadsAndSigns) {
  // Put each special value at every lane of a vector, among ordinary neighbours.
  const std::uint32_t specials[] = {
      0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00008000u, 0x00018000u,   // denormals and ties
      0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FC00000u,   // inf, NaNs
      0x7F7FFFFFu, 0x7F7F8000u, 0xFF7F8000u, 0x00000000u, 0x80000000u};  // overflow to inf, zeros
  for (std::uint32_t special : specials) {
    for (std::size_t lane = 0; lane < 32; ++lane) {
      std::vector<std::uint32_t> patterns(32, 0x3F800000u);
      patterns[lane] = special;
      for (Bf16ConvertPath path : available_bf16_convert_paths()) {
        ASSERT_EQ(first_f32_mismatch(path, patterns), "") << "path " << path_name(path);
      }
    }
  }
}

TEST(Bf16Convert, EveryPathWidensEveryBF16Pattern) {
  std::vector<BF16> all(std::size_t{1} << 16);
  for (std::size_t i = 0; i < all.size(); ++i) all[i].bits = static_cast<std::uint16_t>(i);
  for (Bf16ConvertPath path : available_bf16_convert_paths()) {
    std::vector<float> widened(all.size());
    bf16_to_f32(path, all.data(), widened.data(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(widened[i]), static_cast<std::uint32_t>(i) << 16)
          << "path " << path_name(path) << ", bf16 0x" << std::hex << i;
    }
  }
}

TEST(Bf16Convert, EveryPathConvertsExactlyCountElementsAtAnyAlignment) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  for (std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{22}, (std::size_t{1} << 20) + 3}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      std::vector<float> src(count + offset + 1);
      for (float& v : src) v = value(rng);
      for (Bf16ConvertPath path : available_bf16_convert_paths()) {
        SCOPED_TRACE("path " + path_name(path) + ", count " + std::to_string(count) + ", offset " +
                     std::to_string(offset));
        // A sentinel after the last element must survive both directions.
        std::vector<BF16> narrowed(count + offset + 1);
        narrowed.back().bits = 0xABCDu;
        f32_to_bf16(path, src.data() + offset, narrowed.data() + offset, count);
        ASSERT_EQ(narrowed.back().bits, 0xABCDu);
        std::vector<float> widened(count + offset + 1, -7.0f);
        bf16_to_f32(path, narrowed.data() + offset, widened.data() + offset, count);
        ASSERT_EQ(widened.back(), -7.0f);
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(narrowed[offset + i].bits, f32_to_bf16_bits(src[offset + i])) << i;
          ASSERT_EQ(widened[offset + i], bf16_bits_to_f32(narrowed[offset + i].bits)) << i;
        }
      }
    }
  }
}

TEST(Bf16Convert, AnUnavailablePathIsAnInternalError) {
  for (Bf16ConvertPath path :
       {Bf16ConvertPath::kAvx2, Bf16ConvertPath::kAvx512, Bf16ConvertPath::kAvx512Bf16}) {
    if (bf16_convert_path_available(path)) continue;
    float value = 1.0f;
    BF16 out;
    EXPECT_ANY_THROW(f32_to_bf16(path, &value, &out, 1)) << path_name(path);
  }
}

// All 2^32 f32 patterns on every path: ~a minute per path on one core, so not in the suite.
// Run with --gtest_also_run_disabled_tests --gtest_filter='*EveryF32Pattern*'.
TEST(Bf16Convert, DISABLED_EveryPathRoundsEveryF32PatternAsTheScalarConversion) {
  constexpr std::uint64_t kBlock = std::uint64_t{1} << 24;
  std::vector<std::uint32_t> patterns(kBlock);
  for (std::uint64_t first = 0; first < (std::uint64_t{1} << 32); first += kBlock) {
    for (std::uint64_t i = 0; i < kBlock; ++i) patterns[i] = static_cast<std::uint32_t>(first + i);
    for (Bf16ConvertPath path : available_bf16_convert_paths()) {
      ASSERT_EQ(first_f32_mismatch(path, patterns), "") << "path " << path_name(path);
    }
  }
}

}  // namespace
}  // namespace zt
