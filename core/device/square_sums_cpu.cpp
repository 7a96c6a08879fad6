// The square-sum loop written once and instantiated per vector instruction set (Note [Square
// sums in eight lanes]); core/CMakeLists.txt compiles this file with -ffp-contract=off.
#include "core/device/square_sums_cpu.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace zt {
namespace {

void accumulate_baseline(const float* values, std::size_t count, SquareSumLanes& lanes) {
  accumulate_square_sum_lanes(values, count, lanes);
}
#if defined(__x86_64__)
[[gnu::target("avx2,fma")]] void accumulate_avx2(const float* values, std::size_t count,
                                                 SquareSumLanes& lanes) {
  accumulate_square_sum_lanes(values, count, lanes);
}
[[gnu::target("avx512f,fma")]] void accumulate_avx512(const float* values, std::size_t count,
                                                      SquareSumLanes& lanes) {
  accumulate_square_sum_lanes(values, count, lanes);
}
#endif

}  // namespace

void accumulate_square_sums(const float* values, std::size_t count, SquareSumLanes& lanes) {
  accumulate_square_sums(widest_vector_isa(), values, count, lanes);
}

void accumulate_square_sums(VectorIsa isa, const float* values, std::size_t count,
                            SquareSumLanes& lanes) {
  const auto& isas = supported_vector_isas();
  ZT_CHECK(
      std::find(isas.begin(), isas.end(), isa) != isas.end(),
      "a square sum asked for " + std::string(vector_isa_name(isa)) + ", which this CPU lacks");
  switch (isa) {
#if defined(__x86_64__)
    case VectorIsa::kAvx512:
      return accumulate_avx512(values, count, lanes);
    case VectorIsa::kAvx2:
      return accumulate_avx2(values, count, lanes);
#endif
    default:
      return accumulate_baseline(values, count, lanes);
  }
}

double total_of_lanes(const SquareSumLanes& lanes) {
  const double low = (lanes[0] + lanes[4]) + (lanes[2] + lanes[6]);
  const double high = (lanes[1] + lanes[5]) + (lanes[3] + lanes[7]);
  return low + high;
}

}  // namespace zt
