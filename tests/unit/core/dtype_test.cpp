// DType conversions: round-to-nearest-even, NaN, infinities, denormals, against a double
// reference that rounds by brute force over neighbouring representable values.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace zt {
namespace {

// The bf16 nearest to `x` by exhaustive comparison of the two candidates around it.
std::uint16_t reference_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint16_t down = static_cast<std::uint16_t>(bits >> 16);
  const std::uint16_t up = static_cast<std::uint16_t>(down + 1);
  const double lo = bf16_bits_to_f32(down);
  const double hi = bf16_bits_to_f32(up);
  const double dlo = std::fabs(double{x} - lo);
  const double dhi = std::fabs(double{x} - hi);
  if (dlo < dhi) return down;
  if (dhi < dlo) return up;
  return (down & 1u) ? up : down;
}

TEST(DTypeBF16, RoundsHalfwayCasesToEven) {
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: even mantissa is 1.0.
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0.00390625f), 0x3F80u);
  // 1.0078125 + 2^-8 is halfway between 0x3F81 (odd) and 0x3F82: rounds up to even.
  EXPECT_EQ(f32_to_bf16_bits(1.0078125f + 0.00390625f), 0x3F82u);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0.005f), 0x3F81u);
}

TEST(DTypeBF16, MatchesBruteForceNearestOnRandomFloats) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits_dist;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = std::bit_cast<float>(bits_dist(rng));
    if (!std::isfinite(x) || std::fabs(x) > 3.0e38f) continue;
    ASSERT_EQ(f32_to_bf16_bits(x), reference_bf16(x))
        << "x bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x);
    ++checked;
  }
  EXPECT_GT(checked, 100000);
}

TEST(DTypeBF16, KeepsNaNInfinitySignedZeroAndDenormals) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(nan))));
  // A signalling NaN whose payload lives only in the low bits must stay a NaN.
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(std::bit_cast<float>(0x7F800001u)))));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16_bits_to_f32(f32_to_bf16_bits(inf)), inf);
  EXPECT_EQ(bf16_bits_to_f32(f32_to_bf16_bits(-inf)), -inf);
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000u);
  // f32 max rounds up past the largest finite bf16: infinity, as IEEE rounding requires.
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80u);
  const float denormal = std::bit_cast<float>(0x00010000u);  // exactly representable in bf16
  EXPECT_EQ(bf16_bits_to_f32(f32_to_bf16_bits(denormal)), denormal);
}

TEST(DTypeF16, ConvertsExactValuesAndLimits) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00u);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000u);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFFu);  // largest finite half
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00u);  // halfway to 65536: rounds to inf
  EXPECT_EQ(f32_to_f16_bits(65519.0f), 0x7BFFu);
  EXPECT_EQ(f32_to_f16_bits(1e6f), 0x7C00u);
  EXPECT_EQ(f16_bits_to_f32(0x7C00u), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(std::nanf("")))));
  EXPECT_EQ(f32_to_f16_bits(6.103515625e-05f), 0x0400u);  // smallest normal 2^-14
}

TEST(DTypeF16, DenormalsRoundToNearestEven) {
  const float smallest = 5.9604644775390625e-08f;  // 2^-24, the smallest denormal
  EXPECT_EQ(f32_to_f16_bits(smallest), 0x0001u);
  EXPECT_EQ(f16_bits_to_f32(0x0001u), smallest);
  EXPECT_EQ(f32_to_f16_bits(smallest * 0.5f), 0x0000u);  // tie between 0 and 1: even (0)
  EXPECT_EQ(f32_to_f16_bits(smallest * 1.5f), 0x0002u);  // tie between 1 and 2: even (2)
  EXPECT_EQ(f32_to_f16_bits(smallest * 0.51f), 0x0001u);
  EXPECT_EQ(f32_to_f16_bits(smallest * 2.5f), 0x0002u);
  EXPECT_EQ(f32_to_f16_bits(-smallest * 3.0f), 0x8003u);
  EXPECT_EQ(f16_bits_to_f32(0x03FFu), 0x3FF * smallest);  // largest denormal
}

TEST(DTypeF16, RoundTripsEveryHalfValue) {
  for (std::uint32_t bits = 0; bits <= 0xFFFFu; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float value = f16_bits_to_f32(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(value))));
      continue;
    }
    ASSERT_EQ(f32_to_f16_bits(value), half) << "half 0x" << std::hex << bits;
  }
}

TEST(DTypeF16, RoundsNormalHalfwayCasesToEven) {
  // Between 1.0 (0x3C00) and 1 + 2^-10 (0x3C01): the midpoint goes to the even 0x3C00.
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0.00048828125f), 0x3C00u);
  // Between 0x3C01 and 0x3C02: the midpoint goes to 0x3C02.
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * 0.00048828125f), 0x3C02u);
}

TEST(DTypeConvert, BulkConversionGoesThroughF32) {
  const float src[4] = {1.0f, -0.5f, 3.140625f, 1e-3f};
  std::uint16_t bf16[4];
  float back[4];
  convert_elements(src, DType::kF32, bf16, DType::kBF16, 4);
  convert_elements(bf16, DType::kBF16, back, DType::kF32, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(bf16[i], f32_to_bf16_bits(src[i]));
    EXPECT_NEAR(back[i], src[i], std::fabs(src[i]) / 128.0f);
  }
  EXPECT_EQ(dtype_size(DType::kF32), 4u);
  EXPECT_EQ(dtype_size(DType::kBF16), 2u);
  EXPECT_EQ(dtype_name(DType::kF16), "f16");
}

}  // namespace
}  // namespace zt
