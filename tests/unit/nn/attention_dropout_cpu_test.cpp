// CPU attention dropout's vector loops (nn/kernels/cpu/attention_dropout_cpu.h, Note [Vector
// dropout masks]) on each instruction set this CPU runs: the elements kept are those the scalar
// dropout_keep keeps, and the results the scalar loops' bits, for many row keys, first indices
// and lengths (0, 1, 22, tails of every vector width, 2^20 + 3), forward and backward.
#include "nn/kernels/cpu/attention_dropout_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/kernels/math/attention_dropout_math.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn::cpu {
namespace {

// Run lengths: 0, 1, 22, around the AVX2 (4 64-bit, 8 float lanes) and AVX-512 (8, 16)
// vector widths and their multiples, and a long row.
const std::vector<std::int64_t> kLengths = {0,   1,   3,   4,   5,   7,   8,   9,   15,  16,
                                            17,  22,  31,  32,  33,  63,  64,  65,  100, 127,
                                            128, 129, 255, 256, 257, 511, 512, 513, 1000};
constexpr std::int64_t kLongLength = (std::int64_t{1} << 20) + 3;

// Row keys: dropout_row outputs and the edges of the 64-bit range (the counter wraps).
std::vector<std::uint64_t> row_keys() {
  std::vector<std::uint64_t> keys = {0, 1, ~std::uint64_t{0}, std::uint64_t{1} << 63};
  const std::uint64_t stream = math::dropout_stream(1234, 7, 2, math::DropoutSite::kAttentionProbs);
  for (std::int64_t sample = 0; sample < 12; ++sample) {
    keys.push_back(math::dropout_row(stream, sample));
  }
  return keys;
}

// The head masks a test draws from: p = 0.1, 0.5, 0.9 and 0 (keeps all), on head 1 of a
// sequence of `seq_len`, so element (query, key) is (seq_len + query) seq_len + key.
std::vector<math::AttentionDropoutHead> heads(std::uint64_t row, std::int64_t seq_len) {
  std::vector<math::AttentionDropoutHead> out;
  for (const float p : {0.1f, 0.5f, 0.9f, 0.0f}) {
    out.push_back({row, 1, seq_len, math::dropout_threshold(p), 1.0f / (1.0f - p)});
  }
  return out;
}

std::vector<float> values(std::size_t count, std::uint64_t seed) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = standard_normal(seed, i);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

class AttentionDropoutCpu : public testing::TestWithParam<VectorIsa> {
 protected:
  void SetUp() override {
    const auto& isas = supported_vector_isas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end()) {
      GTEST_SKIP() << "this CPU lacks " << vector_isa_name(GetParam());
    }
  }
};

// Forward over a (3, n) block whose row 0 sees n - 1 keys (the others all n): each visible P
// becomes P / (1 - p) where dropout_keep keeps its element and 0 elsewhere, bit for bit; the
// keys a row does not see, and the row stride's padding, stay as they were.
void expect_forward_matches_dropout_keep(const math::AttentionDropoutHead& mask,
                                         std::int64_t first_query, std::int64_t first_key,
                                         std::int64_t n, VectorIsa isa) {
  constexpr std::int64_t kRows = 3;
  const std::int64_t ld = attention_row_stride(n) + 3;
  std::vector<float> p = values(static_cast<std::size_t>(kRows * ld), mask.row + n);
  std::vector<float> expected = p;
  const ScoreBlock block{p.data(), ld, kRows, n, n - 1};
  for (std::int64_t i = 0; i < kRows; ++i) {
    for (std::int64_t j = 0; j < block.visible(i); ++j) {
      const std::int64_t index =
          math::attention_dropout_index(mask.head, first_query + i, first_key + j, mask.seq_len);
      float& x = expected[static_cast<std::size_t>(i * ld + j)];
      x = math::dropout_keep(mask.row, index, mask.threshold) ? x * mask.scale : 0.0f;
    }
  }
  attention_dropout_rows(mask, first_query, first_key, block, isa);
  EXPECT_TRUE(same_bits(p, expected))
      << vector_isa_name(isa) << " row key " << mask.row << " threshold " << mask.threshold
      << " query " << first_query << " key " << first_key << " n " << n;
}

// Backward over a (3, n) block whose row 0 sees n - 1 keys (the others all n): at a visible key
// dS = P (Z dPd - D) and P -> P Z with Z from dropout_keep, bit for bit the scalar element
// function's; at a masked key (P = 0 there in the kernel) dS = 0 and P stays; the row stride's
// padding stays as it was.
void expect_backward_matches_dropout_keep(const math::AttentionDropoutHead& mask,
                                          std::int64_t first_query, std::int64_t first_key,
                                          std::int64_t n, VectorIsa isa) {
  constexpr std::int64_t kRows = 3;
  const std::int64_t ld = n + 5;
  std::vector<float> p = values(static_cast<std::size_t>(kRows * ld), mask.row + 3 * n);
  std::vector<float> dp = values(p.size(), mask.row + 3 * n + 1);
  const std::vector<float> d = {0.25f, -1.5f, 2.0f};
  std::vector<float> expected_p = p;
  std::vector<float> expected_dp = dp;
  const ScoreBlock block{p.data(), ld, kRows, n, n - 1};
  for (std::int64_t i = 0; i < kRows; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<std::size_t>(i * ld + j);
      if (j >= block.visible(i)) {
        expected_dp[at] = 0.0f;
        continue;
      }
      const std::int64_t index =
          math::attention_dropout_index(mask.head, first_query + i, first_key + j, mask.seq_len);
      expected_dp[at] = math::attention_dropout_score_gradient(
          expected_p[at], expected_dp[at], d[static_cast<std::size_t>(i)],
          math::dropout_keep(mask.row, index, mask.threshold), mask.scale);
    }
  }
  attention_dropout_score_gradient_rows(mask, first_query, first_key, block, dp.data(), d.data(),
                                        isa);
  EXPECT_TRUE(same_bits(p, expected_p) && same_bits(dp, expected_dp))
      << vector_isa_name(isa) << " row key " << mask.row << " threshold " << mask.threshold
      << " query " << first_query << " key " << first_key << " n " << n;
}

TEST_P(AttentionDropoutCpu, ForwardKeepsWhatDropoutKeepKeeps) {
  constexpr std::int64_t kSeqLen = 1030;
  for (const std::uint64_t row : row_keys()) {
    for (const auto& mask : heads(row, kSeqLen)) {
      for (const std::int64_t n : kLengths) {
        // first keys at a block start and off any vector alignment
        for (const std::int64_t first_key : {std::int64_t{0}, std::int64_t{13}}) {
          expect_forward_matches_dropout_keep(mask, 5, first_key, n, GetParam());
        }
      }
    }
  }
}

TEST_P(AttentionDropoutCpu, BackwardKeepsWhatDropoutKeepKeeps) {
  constexpr std::int64_t kSeqLen = 1030;
  for (const std::uint64_t row : row_keys()) {
    for (const auto& mask : heads(row, kSeqLen)) {
      for (const std::int64_t n : kLengths) {
        for (const std::int64_t first_key : {std::int64_t{0}, std::int64_t{13}}) {
          expect_backward_matches_dropout_keep(mask, 7, first_key, n, GetParam());
        }
      }
    }
  }
}

// A row of 2^20 + 3 keys, on a sequence long enough that the element index passes 2^32.
TEST_P(AttentionDropoutCpu, LongRowsKeepWhatDropoutKeepKeeps) {
  const std::int64_t seq_len = kLongLength + 8;
  const auto mask = heads(row_keys()[5], seq_len)[1];
  expect_forward_matches_dropout_keep(mask, 4100, 9, kLongLength, GetParam());
  expect_backward_matches_dropout_keep(mask, 4100, 9, kLongLength, GetParam());
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, AttentionDropoutCpu,
                         testing::Values(VectorIsa::kBaseline, VectorIsa::kAvx2,
                                         VectorIsa::kAvx512),
                         [](const testing::TestParamInfo<VectorIsa>& isa) {
                           return std::string(vector_isa_name(isa.param));
                         });

}  // namespace
}  // namespace zt::nn::cpu
