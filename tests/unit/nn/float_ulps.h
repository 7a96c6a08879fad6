// Float bit patterns and errors in units of the last place, for the tests of the shared math's
// own functions (exp_f32, tanh_f32) against double precision.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.h"

namespace zt::nn::testing {

inline float float_from_bits(std::uint32_t bits) { return zt::detail::bit_cast<float>(bits); }
inline std::uint32_t bits_of(float value) { return zt::detail::bit_cast<std::uint32_t>(value); }

// |got - reference| in units of the last place of the float nearest the reference (2^-149
// for a subnormal one); 0 where both overflow the floats.
inline double ulp_error(float got, double reference) {
  const auto nearest = static_cast<float>(std::fabs(reference));
  if (std::isinf(nearest)) return got == nearest ? 0.0 : std::numeric_limits<double>::infinity();
  const double ulp = nearest < std::numeric_limits<float>::min()
                         ? std::ldexp(1.0, -149)
                         : std::ldexp(1.0, std::ilogb(nearest) - 23);
  return std::fabs(static_cast<double>(got) - reference) / ulp;
}

}  // namespace zt::nn::testing
