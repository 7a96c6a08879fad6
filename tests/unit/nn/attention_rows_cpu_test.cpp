// CPU attention's row loops (nn/kernels/cpu/attention_rows_cpu.h): every vector path this CPU
// runs gives the baseline's bits, for rows of 0, 1, 22, 100 and 512 keys with every kind of
// mask cut (no key visible, some, all); the forward against a double-precision softmax.
#include "nn/kernels/cpu/attention_rows_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/random.h"

namespace zt::nn::cpu {
namespace {

constexpr std::int64_t kRows = 5;

// A (kRows, n) block of scores of scale 3 with row stride attention_row_stride(n) + 3 (the
// last 3 of each row must stay as they are).
struct Block {
  std::int64_t n;
  std::int64_t ld;
  std::vector<float> values;
};
Block scores(std::int64_t n, std::uint64_t seed) {
  Block block{n, attention_row_stride(n) + 3, {}};
  block.values.resize(static_cast<std::size_t>(kRows * block.ld));
  for (std::size_t i = 0; i < block.values.size(); ++i) {
    block.values[i] = 3.0f * standard_normal(seed, i);
  }
  return block;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The mask cuts a test runs: row 0 sees none of the block's keys, or 1, or all.
std::vector<std::int64_t> diagonals(std::int64_t n) { return {-2, 1, n / 2, n, n + 7}; }

constexpr std::int64_t kHeadDim = 19;

// One forward step on isa: the probabilities, the statistics, the rescaled and finished o.
struct ForwardResult {
  std::vector<float> p;
  std::vector<float> statistics;  // max, sum per row
  std::vector<float> o;
  std::vector<float> lse;
};
ForwardResult forward(const Block& s, std::int64_t diagonal, VectorIsa isa) {
  ForwardResult result{
      s.values, {}, std::vector<float>(kRows * kHeadDim), std::vector<float>(kRows)};
  std::vector<math::OnlineSoftmax> state(kRows);
  for (std::int64_t i = 0; i < kRows; ++i) {
    // row 0 starts empty, the others as if an earlier block had been seen
    state[static_cast<std::size_t>(i)] =
        i == 0 ? math::online_softmax_empty() : math::OnlineSoftmax{0.5f * i, 1.0f + i};
  }
  for (std::size_t e = 0; e < result.o.size(); ++e) result.o[e] = standard_normal(7, e);
  attention_forward_rows({result.p.data(), s.ld, kRows, s.n, diagonal}, state.data(),
                         result.o.data(), kHeadDim, kHeadDim, isa);
  for (const math::OnlineSoftmax& row : state) {
    result.statistics.push_back(row.max);
    result.statistics.push_back(row.sum);
  }
  // row 0 has seen no key when none of the block is visible to it: finish it as if it had
  for (math::OnlineSoftmax& row : state) {
    if (row.sum == 0.0f) row = {0.0f, 1.0f};
  }
  attention_forward_finish(state.data(), kRows, result.o.data(), kHeadDim, kHeadDim,
                           result.lse.data(), isa);
  return result;
}

TEST(AttentionRowsCpu, EveryVectorPathGivesTheBaselineBits) {
  for (const std::int64_t n :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{22}, std::int64_t{100}, std::int64_t{512}}) {
    const Block s = scores(n, 11), dp = scores(n, 12);
    for (const std::int64_t diagonal : diagonals(n)) {
      const ForwardResult baseline = forward(s, diagonal, VectorIsa::kBaseline);
      std::vector<float> p_baseline = s.values, ds_baseline = dp.values;
      const std::vector<float> lse = {0.5f, -1.0f, 2.0f, 7.5f, 0.0f};
      const std::vector<float> d = {0.25f, -3.0f, 1.0f, 0.0f, 9.0f};
      attention_probability_rows({p_baseline.data(), s.ld, kRows, n, diagonal}, lse.data(),
                                 VectorIsa::kBaseline);
      attention_score_gradient_rows(p_baseline.data(), ds_baseline.data(), s.ld, kRows, n, d.data(),
                                    VectorIsa::kBaseline);
      for (const VectorIsa isa : supported_vector_isas()) {
        const std::string what = std::string(vector_isa_name(isa)) + ", n " + std::to_string(n) +
                                 ", diagonal " + std::to_string(diagonal);
        const ForwardResult got = forward(s, diagonal, isa);
        EXPECT_TRUE(same_bits(got.p, baseline.p)) << "forward p, " << what;
        EXPECT_TRUE(same_bits(got.statistics, baseline.statistics)) << "statistics, " << what;
        EXPECT_TRUE(same_bits(got.o, baseline.o)) << "o, " << what;
        EXPECT_TRUE(same_bits(got.lse, baseline.lse)) << "lse, " << what;
        std::vector<float> p = s.values, ds = dp.values;
        attention_probability_rows({p.data(), s.ld, kRows, n, diagonal}, lse.data(), isa);
        attention_score_gradient_rows(p.data(), ds.data(), s.ld, kRows, n, d.data(), isa);
        EXPECT_TRUE(same_bits(p, p_baseline)) << "backward P, " << what;
        EXPECT_TRUE(same_bits(ds, ds_baseline)) << "dS, " << what;
      }
    }
  }
}

TEST(AttentionRowsCpu, OutputDotsGiveTheBaselineBitsAndTheDoubleDot) {
  for (const std::int64_t head_dim : {std::int64_t{1}, kHeadDim, std::int64_t{64}}) {
    const std::int64_t ld = head_dim + 2;
    std::vector<float> o(static_cast<std::size_t>(kRows * ld)), d_o(o.size());
    for (std::size_t e = 0; e < o.size(); ++e) {
      o[e] = standard_normal(21, e);
      d_o[e] = standard_normal(22, e);
    }
    std::vector<float> baseline(kRows);
    attention_output_dots(o.data(), ld, d_o.data(), ld, kRows, head_dim, baseline.data(),
                          VectorIsa::kBaseline);
    for (std::int64_t i = 0; i < kRows; ++i) {
      double dot = 0.0;
      for (std::int64_t e = i * ld; e < i * ld + head_dim; ++e) {
        dot += double{o[static_cast<std::size_t>(e)]} * d_o[static_cast<std::size_t>(e)];
      }
      EXPECT_NEAR(baseline[static_cast<std::size_t>(i)], dot, 1e-5) << "row " << i;
    }
    for (const VectorIsa isa : supported_vector_isas()) {
      std::vector<float> d(kRows);
      attention_output_dots(o.data(), ld, d_o.data(), ld, kRows, head_dim, d.data(), isa);
      EXPECT_TRUE(same_bits(d, baseline)) << vector_isa_name(isa) << ", head_dim " << head_dim;
    }
  }
}

TEST(AttentionRowsCpu, ForwardFromEmptyIsTheSoftmaxOfTheVisibleScores) {
  const std::int64_t n = 100;
  const Block s = scores(n, 3);
  for (const std::int64_t diagonal : {std::int64_t{1}, std::int64_t{37}, n}) {
    std::vector<float> p = s.values;
    std::vector<math::OnlineSoftmax> state(kRows, math::online_softmax_empty());
    std::vector<float> o(kRows * kHeadDim, 1.0f);
    attention_forward_rows({p.data(), s.ld, kRows, n, diagonal}, state.data(), o.data(), kHeadDim,
                           kHeadDim);
    for (std::int64_t i = 0; i < kRows; ++i) {
      const std::int64_t visible = std::min(n, diagonal + i);
      const float* row = s.values.data() + i * s.ld;
      double max = -INFINITY, sum = 0.0;
      for (std::int64_t j = 0; j < visible; ++j) max = std::max(max, double{row[j]});
      for (std::int64_t j = 0; j < visible; ++j) sum += std::exp(double{row[j]} - max);
      const math::OnlineSoftmax& got = state[static_cast<std::size_t>(i)];
      EXPECT_EQ(got.max, static_cast<float>(max)) << "row " << i;
      EXPECT_NEAR(got.sum, sum, 1e-6 * sum) << "row " << i;
      for (std::int64_t j = 0; j < n; ++j) {
        // exp of the difference as the loop rounds it: within exp_f32's 1.02 ulp
        const float shifted = row[j] - static_cast<float>(max);
        const double want = j < visible ? std::exp(double{shifted}) : 0.0;
        EXPECT_NEAR(p[static_cast<std::size_t>(i * s.ld + j)], want, 1.3e-7 * want)
            << "row " << i << " key " << j;
      }
      // the loops' scratch ends at attention_row_stride(n)
      for (std::int64_t j = attention_row_stride(n); j < s.ld; ++j) {
        EXPECT_EQ(p[static_cast<std::size_t>(i * s.ld + j)], row[j]);
      }
      // the first block leaves o alone: the caller's P v product writes it with beta 0
      for (std::int64_t d = 0; d < kHeadDim; ++d) {
        EXPECT_EQ(o[static_cast<std::size_t>(i * kHeadDim + d)], 1.0f) << "row " << i;
      }
    }
  }
}

// A row that has seen keys before keeps its accumulator's scale right: o is multiplied by
// exp(max - max') when the block raises the max, left alone when it does not; a row that has
// seen nothing yet (state empty) leaves o to the caller's beta-0 product.
TEST(AttentionRowsCpu, ForwardRescalesOnlyRowsThatHaveAccumulated) {
  const std::int64_t n = 22;
  const Block s = scores(n, 5);
  for (const VectorIsa isa : supported_vector_isas()) {
    std::vector<float> p = s.values;
    std::vector<math::OnlineSoftmax> state(kRows);
    state[0] = math::online_softmax_empty();
    state[1] = {-1.0f, 1.0f};   // the block raises the max (scores of scale 3): rescaled
    state[2] = {100.0f, 1.0f};  // none is: the max stays, o stays
    state[3] = {-1.0f, 1.0f};   // sees no key of the block (diagonal below): o stays
    state[4] = math::online_softmax_empty();
    const std::vector<math::OnlineSoftmax> before = state;
    std::vector<float> o(kRows * kHeadDim, 2.0f);
    // row i sees clamp(diagonal + i, 0, n) keys: with diagonal -3 rows 0-3 see none, row 4 one
    attention_forward_rows({p.data(), s.ld, kRows, n, -3}, state.data(), o.data(), kHeadDim,
                           kHeadDim, isa);
    const auto o_at = [&](std::int64_t i) { return o[static_cast<std::size_t>(i * kHeadDim)]; };
    EXPECT_EQ(o_at(0), 2.0f) << vector_isa_name(isa);
    EXPECT_EQ(o_at(1), 2.0f) << "row 1 saw no key of the block, " << vector_isa_name(isa);
    EXPECT_EQ(o_at(3), 2.0f) << vector_isa_name(isa);
    EXPECT_EQ(o_at(4), 2.0f) << "first finite score: o is the caller's, " << vector_isa_name(isa);
    EXPECT_EQ(state[1].max, before[1].max);
    // now every row sees all keys
    p = s.values;
    std::fill(o.begin(), o.end(), 2.0f);
    state = before;
    attention_forward_rows({p.data(), s.ld, kRows, n, n}, state.data(), o.data(), kHeadDim,
                           kHeadDim, isa);
    EXPECT_EQ(o_at(0), 2.0f) << vector_isa_name(isa);
    EXPECT_EQ(o_at(4), 2.0f) << vector_isa_name(isa);
    for (const std::int64_t i : {std::int64_t{1}, std::int64_t{3}}) {
      const double want = 2.0 * std::exp(double{before[static_cast<std::size_t>(i)].max} -
                                         double{state[static_cast<std::size_t>(i)].max});
      EXPECT_NEAR(o_at(i), want, 1e-6 * want) << "row " << i << ", " << vector_isa_name(isa);
      EXPECT_GT(state[static_cast<std::size_t>(i)].max, -1.0f);
    }
    EXPECT_EQ(o_at(2), 2.0f) << "the max did not rise, " << vector_isa_name(isa);
  }
}

}  // namespace
}  // namespace zt::nn::cpu
