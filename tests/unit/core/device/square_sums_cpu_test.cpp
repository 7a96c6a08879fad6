// The CPU square-sum loop (core/device/square_sums_cpu.h): on every vector path this CPU runs,
// element i goes to lane i % 8 as a plain double loop puts it, bit for bit, at sizes 0, 1, 22
// and 2^20 + 3, also when the elements come in pieces; the lanes are added in their fixed order.
#include "core/device/square_sums_cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/random.h"

namespace zt {
namespace {

std::vector<float> normals(std::size_t n, std::uint64_t seed) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = 3.0f * standard_normal(seed, i);
  return values;
}

SquareSumLanes plain_lanes(const std::vector<float>& values) {
  SquareSumLanes lanes{};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    lanes[i % kSquareSumLanes] += v * v;
  }
  return lanes;
}

bool same_bits(const SquareSumLanes& a, const SquareSumLanes& b) {
  return std::memcmp(a.data(), b.data(), sizeof(a)) == 0;
}

TEST(SquareSumsCpu, EveryPathFillsTheLanesAsThePlainLoop) {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{22}, (std::size_t{1} << 20) + 3}) {
    const std::vector<float> values = normals(n, 7);
    const SquareSumLanes want = plain_lanes(values);
    for (const VectorIsa path : supported_vector_isas()) {
      const std::string what = std::string(vector_isa_name(path)) + " size " + std::to_string(n);
      SquareSumLanes whole{};
      accumulate_square_sums(path, values.data(), n, whole);
      EXPECT_TRUE(same_bits(whole, want)) << what;
      SquareSumLanes pieces{};  // pieces of 1024, as sum_of_squares converts bf16
      for (std::size_t first = 0; first < n; first += 1024) {
        accumulate_square_sums(path, values.data() + first, std::min<std::size_t>(1024, n - first),
                               pieces);
      }
      EXPECT_TRUE(same_bits(pieces, want)) << what << " in pieces";
    }
  }
}

TEST(SquareSumsCpu, LanesAddInTheirFixedOrder) {
  // 1 + 2^-53 + 2^-53 ... : the order of the adds decides whether the small lanes survive.
  const double tiny = std::numeric_limits<double>::epsilon() / 2;
  const SquareSumLanes lanes = {1.0, tiny, 0.0, tiny, tiny, 0.0, tiny, 0.0};
  // low = (1 + tiny) + (0 + tiny) = 1 + tiny = 1 (ties to even); high = (tiny + 0) + (tiny + 0).
  EXPECT_EQ(total_of_lanes(lanes), 1.0 + 2 * tiny);
  EXPECT_NE(total_of_lanes(lanes), ((((((1.0 + tiny) + 0.0) + tiny) + tiny) + 0.0) + tiny) + 0.0);
}

}  // namespace
}  // namespace zt
