// The CPU bias loops (nn/kernels/cpu/bias_cpu.h): on every vector path this CPU runs, the
// column sums equal the plain row-after-row f32 loop bit for bit (so a bias gradient is the
// same on any machine) and the bias add equals math::bias_add, at sizes 0, 1, 22 and more.
#include "nn/kernels/cpu/bias_cpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/kernels/math/bias_residual_math.h"

namespace zt::nn::cpu {
namespace {

std::vector<float> normals(std::int64_t n, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = standard_normal(seed, i);
  return values;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Column widths that cover the 64- and 16-column blocks, their tails and none of them.
constexpr std::int64_t kColumnCounts[] = {0, 1, 22, 64, 80, 203};
constexpr std::int64_t kRowCounts[] = {0, 1, 22, 301};

TEST(BiasCpu, ColumnSumsAddEachColumnInRowOrderOnEveryPath) {
  for (const std::int64_t cols : kColumnCounts) {
    for (const std::int64_t rows : kRowCounts) {
      const std::int64_t stride = cols + 5;  // a sub-matrix of wider rows
      const std::vector<float> values = normals(rows * stride, 3);
      const std::vector<float> start = normals(cols, 4);
      std::vector<float> expected = start;
      for (std::int64_t n = 0; n < rows; ++n) {
        for (std::int64_t c = 0; c < cols; ++c) {
          expected[static_cast<std::size_t>(c)] += values[static_cast<std::size_t>(n * stride + c)];
        }
      }
      for (const VectorIsa isa : supported_vector_isas()) {
        std::vector<float> sums = start;
        add_column_sums_f32(values.data(), rows, cols, stride, sums.data(), isa);
        EXPECT_TRUE(same_bits(sums, expected))
            << vector_isa_name(isa) << ", " << rows << " x " << cols;
      }
    }
  }
}

TEST(BiasCpu, ColumnSumsAreNotAPairwiseOrVectorReorderedSum) {
  // 1 + 2^-24 + 2^-24 in row order is 1 (each half-ulp add rounds to even); any other order
  // that adds the two small rows first gives 1 + 2^-23.
  const float tiny = 1.0f / 16777216.0f;
  const std::vector<float> values = {1.0f, tiny, tiny};
  for (const VectorIsa isa : supported_vector_isas()) {
    float sum = 0.0f;
    add_column_sums_f32(values.data(), 3, 1, 1, &sum, isa);
    EXPECT_EQ(sum, 1.0f) << vector_isa_name(isa);
  }
}

TEST(BiasCpu, BiasAddMatchesTheSharedMathOnEveryPath) {
  for (const std::int64_t cols : kColumnCounts) {
    const std::vector<float> row = normals(cols, 5), bias = normals(cols, 6);
    std::vector<float> expected(row.size());
    for (std::size_t c = 0; c < row.size(); ++c) expected[c] = math::bias_add(row[c], bias[c]);
    for (const VectorIsa isa : supported_vector_isas()) {
      std::vector<float> out = row;
      add_bias_f32(out.data(), bias.data(), cols, isa);
      EXPECT_TRUE(same_bits(out, expected)) << vector_isa_name(isa) << ", " << cols;
    }
  }
}

}  // namespace
}  // namespace zt::nn::cpu
