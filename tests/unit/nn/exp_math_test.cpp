// exp_f32 (nn/kernels/math/exp_math.h) against double-precision exp over a sweep of the
// floats it does not clamp, every float where results turn subnormal, zero or infinite, and
// its special values.
#include "nn/kernels/math/exp_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "float_ulps.h"

namespace zt::nn {
namespace {

using testing::bits_of;
using testing::float_from_bits;
using testing::ulp_error;

// The largest error over the floats with bit patterns first, first + stride, ... <= last (a
// negative range counts its bit patterns up from -0 too).
double worst_ulp_error(std::uint32_t first, std::uint32_t last, std::uint32_t stride) {
  double worst = 0.0;
  for (std::uint64_t bits = first; bits <= last; bits += stride) {
    const float x = float_from_bits(static_cast<std::uint32_t>(bits));
    const double error = ulp_error(math::exp_f32(x), std::exp(static_cast<double>(x)));
    EXPECT_LE(error, 1e9) << "x = " << x;  // names the input of a gross error
    worst = std::max(worst, error);
  }
  return worst;
}

// A run over all 2.24e9 floats in [kExpLowest, kExpHighest] (the same code) found at most
// 1.0103 ulp, at x = -5.87788439; the tests sweep a sample and the edges.
constexpr double kMaxUlp = 1.02;

TEST(ExpMath, MatchesDoubleExpOverASampleOfItsRange) {
  EXPECT_LE(worst_ulp_error(0, bits_of(math::kExpHighest), 251), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(-0.0f), bits_of(math::kExpLowest), 251), kMaxUlp);
}

TEST(ExpMath, MatchesDoubleExpOnEveryFloatNearItsEdges) {
  // results turning subnormal (e^x < 2^-126 from x = -87.34), rounding to 0 (x = -103.97)
  // and overflowing (x = 88.72); and every float near 0, where n switches between -1, 0, 1
  EXPECT_LE(worst_ulp_error(bits_of(-87.0f), bits_of(-87.6f), 1), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(-103.5f), bits_of(math::kExpLowest), 1), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(88.5f), bits_of(math::kExpHighest), 1), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(0.33f), bits_of(0.36f), 1), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(-0.33f), bits_of(-0.36f), 1), kMaxUlp);
}

TEST(ExpMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(math::exp_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(math::exp_f32(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(math::exp_f32(inf), inf);
  EXPECT_EQ(bits_of(math::exp_f32(-inf)), bits_of(0.0f));
  EXPECT_EQ(bits_of(math::exp_f32(-104.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(math::exp_f32(-1e30f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(math::exp_f32(-std::numeric_limits<float>::max())), bits_of(0.0f));
  EXPECT_EQ(math::exp_f32(88.8f), inf);
  EXPECT_EQ(math::exp_f32(std::numeric_limits<float>::max()), inf);
  EXPECT_EQ(math::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(math::exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(math::exp_f32(std::numeric_limits<float>::denorm_min()), 1.0f);
  EXPECT_EQ(math::exp_f32(1.0f), static_cast<float>(std::exp(1.0)));
  // results near the largest float and the least subnormal are reached, not flushed
  const float near_overflow = 88.72283f, near_underflow = -103.2789f;
  EXPECT_TRUE(std::isfinite(math::exp_f32(near_overflow)));
  EXPECT_LE(ulp_error(math::exp_f32(near_overflow), std::exp(double{near_overflow})), kMaxUlp);
  EXPECT_EQ(math::exp_f32(near_underflow), std::numeric_limits<float>::denorm_min());
}

}  // namespace
}  // namespace zt::nn
