// tanh_f32 (nn/kernels/math/tanh_math.h) against double-precision tanh over a sweep of the
// floats, dense where its two halves meet, and its special values.
#include "nn/kernels/math/tanh_math.h"

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

// The largest error over the floats with bit patterns first, first + stride, ... <= last, and
// checks that the negative of each gives the negative result.
double worst_ulp_error(std::uint32_t first, std::uint32_t last, std::uint32_t stride) {
  double worst = 0.0;
  for (std::uint64_t bits = first; bits <= last; bits += stride) {
    const float x = float_from_bits(static_cast<std::uint32_t>(bits));
    const float y = math::tanh_f32(x);
    worst = std::max(worst, ulp_error(y, std::tanh(static_cast<double>(x))));
    EXPECT_EQ(bits_of(math::tanh_f32(-x)), bits_of(-y)) << "tanh is odd, x = " << x;
  }
  return worst;
}

// A run over all 2^31 non-negative floats (the same code, vectorized) found at most 1.3303
// ulp, at x = 0.628309548, just past the switch to the exp form; the tests sweep a sample.
constexpr double kMaxUlp = 1.34;

TEST(TanhMath, MatchesDoubleTanhOverASampleOfAllFloats) {
  const std::uint32_t largest_finite = bits_of(std::numeric_limits<float>::max());
  EXPECT_LE(worst_ulp_error(0, largest_finite, 4099), kMaxUlp);
}

TEST(TanhMath, MatchesDoubleTanhOnEveryFloatWhereTheHalvesMeet) {
  // Every float in [0.615, 0.65]: the polynomial's end and the exp form's start, where the
  // subtraction 1 - 2 / (e^{2x} + 1) cancels most.
  EXPECT_LE(worst_ulp_error(bits_of(0.615f), bits_of(0.65f), 1), kMaxUlp);
}

TEST(TanhMath, MatchesDoubleTanhNearZeroAndNearSaturation) {
  EXPECT_LE(worst_ulp_error(bits_of(1e-6f), bits_of(1e-2f), 97), kMaxUlp);
  EXPECT_LE(worst_ulp_error(bits_of(8.0f), bits_of(11.0f), 13), kMaxUlp);
}

TEST(TanhMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(math::tanh_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(math::tanh_f32(inf), 1.0f);
  EXPECT_EQ(math::tanh_f32(-inf), -1.0f);
  EXPECT_EQ(math::tanh_f32(1e30f), 1.0f);
  EXPECT_EQ(math::tanh_f32(-9.5f), -1.0f);
  EXPECT_EQ(bits_of(math::tanh_f32(0.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(math::tanh_f32(-0.0f)), bits_of(-0.0f));
  const float subnormal = std::numeric_limits<float>::denorm_min() * 5.0f;
  EXPECT_EQ(math::tanh_f32(subnormal), subnormal);
  EXPECT_EQ(math::tanh_f32(1e-20f), 1e-20f);
}

}  // namespace
}  // namespace zt::nn
