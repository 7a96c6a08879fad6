// Next-token selection (nn/kernels/math/token_select_math.h and the CPU backend's
// select_tokens) against double-precision references: argmax with ties, top-k with a
// temperature against the distribution computed independently for each fixed draw, a top_k past
// the vocabulary, padded columns never chosen, and the backend reading each row's last logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/memory_tracker.h"
#include "core/random.h"
#include "nn/kernels/math/token_select_math.h"
#include "tests/unit/nn/cpu_test_context.h"

namespace zt::nn {
namespace {

constexpr std::uint64_t kSeed = 17;
constexpr int kDraws = 4000;

// What the draw `draw` picks from z's first `classes` logits, computed in double from the
// definition: the top-k ids by (logit, lower id), softmax(z / temperature) over them, and the
// first id in id order whose cumulative probability passes draw / 2^64. *margin is the draw's
// distance to the nearest cumulative boundary, where the integer weights may round otherwise.
std::int64_t reference_draw(const std::vector<float>& z, std::int64_t classes, double temperature,
                            std::int64_t top_k, std::uint64_t draw, double* margin) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(classes));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return z[static_cast<std::size_t>(a)] > z[static_cast<std::size_t>(b)];
  });
  const std::size_t kept =
      top_k == 0 ? order.size() : std::min(order.size(), static_cast<std::size_t>(top_k));
  std::vector<std::int64_t> candidates(order.begin(), order.begin() + kept);
  std::sort(candidates.begin(), candidates.end());
  const double z_max = z[static_cast<std::size_t>(order.front())];
  double total = 0.0;
  for (const std::int64_t c : candidates) {
    total += std::exp((z[static_cast<std::size_t>(c)] - z_max) / temperature);
  }
  const double u = static_cast<double>(draw) / 18446744073709551616.0;
  double cumulative = 0.0;
  *margin = 1.0;
  std::int64_t chosen = -1;
  for (const std::int64_t c : candidates) {
    cumulative += std::exp((z[static_cast<std::size_t>(c)] - z_max) / temperature) / total;
    *margin = std::min(*margin, std::abs(cumulative - u));
    if (chosen < 0 && cumulative > u) chosen = c;
  }
  return chosen < 0 ? candidates.back() : chosen;
}

std::vector<float> row_of(std::int64_t columns, std::uint64_t key, float scale) {
  std::vector<float> z(static_cast<std::size_t>(columns));
  for (std::size_t c = 0; c < z.size(); ++c) z[c] = scale * standard_normal(key, c);
  return z;
}

TEST(TokenSelect, TheDrawIsCoreRandomsSamplingStream) {
  const std::uint64_t key = math::sampling_row_key(kSeed, 3);
  EXPECT_EQ(key, random_key(kSeed, math::kSamplingStream, 3));
  for (std::uint64_t step = 0; step < 8; ++step) {
    EXPECT_EQ(static_cast<float>(math::sampling_draw(key, step) >> 40) * 5.9604644775390625e-08f,
              uniform01(key, step))
        << "step " << step;
  }
}

TEST(TokenSelect, GreedyIsTheFirstLargestLogitOfTheValidColumns) {
  // Ties at 3.0 (ids 1 and 3): the lower id; the padded columns (5, 6) hold larger logits.
  const std::vector<float> z = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f, 9.0f, 9.0f};
  EXPECT_EQ(math::greedy_token(z.data(), 5), 1);
  EXPECT_EQ(math::select_token_row(z.data(), 5, 0.0f, 0, 12345), 1);
  EXPECT_EQ(math::greedy_token(z.data(), 7), 5);
  const std::vector<float> one = {-4.0f};
  EXPECT_EQ(math::greedy_token(one.data(), 1), 0);
}

TEST(TokenSelect, TopKWithATemperatureDrawsWhatTheExactDistributionGives) {
  struct Case {
    std::int64_t classes;
    double temperature;
    std::int64_t top_k;
  };
  const Case cases[] = {{50, 1.0, 0}, {50, 0.7, 5}, {300, 2.0, 40}, {7, 1.3, 1}, {1000, 0.5, 0}};
  for (const Case& c : cases) {
    const std::vector<float> z = row_of(c.classes + 3, 7 + c.classes, 2.0f);
    int compared = 0;
    for (std::uint64_t step = 0; step < kDraws; ++step) {
      const std::uint64_t draw = math::sampling_draw(math::sampling_row_key(kSeed, 0), step);
      double margin = 0.0;
      const std::int64_t expected =
          reference_draw(z, c.classes, c.temperature, c.top_k, draw, &margin);
      if (margin < 1e-6) continue;  // within rounding of a boundary: either id is right
      ++compared;
      ASSERT_EQ(math::select_token_row(z.data(), c.classes, static_cast<float>(c.temperature),
                                       c.top_k, draw),
                expected)
          << "classes " << c.classes << " temperature " << c.temperature << " top_k " << c.top_k
          << " step " << step << " seed " << kSeed;
    }
    EXPECT_GT(compared, kDraws * 9 / 10);
  }
}

TEST(TokenSelect, TiesAtTheTopKBoundaryKeepTheLowestIds) {
  // Top 3 of {0.0, 2.0, 1.0, 1.0, 1.0}: id 1, then ids 2 and 3 of the three tied at 1.0.
  const std::vector<float> z = {0.0f, 2.0f, 1.0f, 1.0f, 1.0f};
  std::vector<int> seen(z.size(), 0);
  for (std::uint64_t step = 0; step < kDraws; ++step) {
    const std::uint64_t draw = math::sampling_draw(math::sampling_row_key(kSeed, 1), step);
    ++seen[static_cast<std::size_t>(math::select_token_row(z.data(), 5, 1.0f, 3, draw))];
  }
  EXPECT_EQ(seen[0], 0);
  EXPECT_EQ(seen[4], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
  EXPECT_GT(seen[3], 0);
}

TEST(TokenSelect, ATopKPastTheVocabularyIsEveryIdAndPaddedColumnsAreNeverDrawn) {
  const std::int64_t classes = 20;
  std::vector<float> z = row_of(classes, 5, 1.0f);
  z.insert(z.end(), {50.0f, 50.0f, 50.0f});  // padded columns far above every real logit
  for (std::uint64_t step = 0; step < kDraws; ++step) {
    const std::uint64_t draw = math::sampling_draw(math::sampling_row_key(kSeed, 2), step);
    const std::int64_t every = math::select_token_row(z.data(), classes, 1.5f, 0, draw);
    ASSERT_LT(every, classes) << "step " << step;
    ASSERT_EQ(math::select_token_row(z.data(), classes, 1.5f, classes, draw), every);
    ASSERT_EQ(math::select_token_row(z.data(), classes, 1.5f, classes + 100, draw), every);
  }
}

// The CPU backend on bf16 logits (B, T, C) reads each row's last position and draws row b
// from stream b at the op's step, as the row function does over the same logits widened.
TEST(TokenSelect, CpuBackendReadsEachRowsLastPositionWithItsOwnStream) {
  constexpr std::int64_t kRows = 3, kPositions = 2, kColumns = 40, kClasses = 33;
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  std::vector<BF16> logits(static_cast<std::size_t>(kRows * kPositions * kColumns));
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = BF16(2.0f * standard_normal(9, i));
  const Tensor z = Tensor::wrap(logits.data(), Shape{kRows, kPositions, kColumns}, DType::kBF16);
  std::vector<std::int32_t> ids(kRows, -1);
  const Tensor out = Tensor::wrap(ids.data(), Shape{kRows, 1}, DType::kI32);
  struct Options {
    float temperature;
    std::int64_t top_k;
  };
  for (const Options o : {Options{0.0f, 0}, Options{1.0f, 0}, Options{0.8f, 6}}) {
    for (std::uint64_t step = 0; step < 50; ++step) {
      const math::TokenSampling sampling{o.temperature, o.top_k, kSeed, step};
      testing::cpu_kernels().select_tokens(context.device(), z, kClasses, sampling, out);
      for (std::int64_t b = 0; b < kRows; ++b) {
        std::vector<float> last(static_cast<std::size_t>(kColumns));
        const BF16* row = logits.data() + (b * kPositions + kPositions - 1) * kColumns;
        for (std::size_t c = 0; c < last.size(); ++c) last[c] = static_cast<float>(row[c]);
        const std::uint64_t draw =
            math::sampling_draw(math::sampling_row_key(kSeed, static_cast<std::uint64_t>(b)), step);
        ASSERT_EQ(ids[static_cast<std::size_t>(b)],
                  math::select_token_row(last.data(), kClasses, o.temperature, o.top_k, draw))
            << "row " << b << " step " << step << " temperature " << o.temperature;
      }
    }
  }
}

}  // namespace
}  // namespace zt::nn
