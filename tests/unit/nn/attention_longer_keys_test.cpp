// Attention with k and v longer than q (Note [Longer key sequence]), the KV cache's case: the
// last T_q queries over all T_kv keys give the last T_q rows of the square attention over
// T_kv positions, in f32 and bf16; the backward refuses it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

struct LongerKeysCase {
  std::int64_t batch, kv_len, query_len, n_head, n_kv_head, head_dim;
  std::string name() const {
    return "B" + std::to_string(batch) + " Tkv" + std::to_string(kv_len) + " Tq" +
           std::to_string(query_len) + " nh" + std::to_string(n_head) + " nkv" +
           std::to_string(n_kv_head) + " hs" + std::to_string(head_dim);
  }
};

// One decode step, a short chunk, grouped-query heads and T_q == T_kv (today's case).
const LongerKeysCase kLongerKeysCases[] = {
    {2, 9, 1, 2, 2, 4}, {1, 33, 5, 4, 2, 3}, {3, 7, 3, 6, 1, 2}, {2, 6, 6, 2, 2, 4}};

class AttentionLongerKeys : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionLongerKeys, LastQueriesEqualTheLastRowsOfTheFullAttention) {
  const DType dtype = GetParam();
  for (const LongerKeysCase& c : kLongerKeysCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const Shape fused{c.batch, c.kv_len, (c.n_head + 2 * c.n_kv_head) * c.head_dim};
    const Tensor qkv = testing::make_tensor(testing::random_values(fused.numel(), 91, dtype), fused,
                                            dtype, tracker, MemoryCategory::kActivations);
    const QkvHeads x = split_qkv(qkv, c.n_head, c.n_kv_head);
    const auto output = [&](std::int64_t positions) {
      return Tensor::zeros(Shape{c.batch, positions, c.n_head * c.head_dim}, dtype, tracker,
                           MemoryCategory::kActivations);
    };
    const auto lse_of = [&](std::int64_t positions) {
      return Tensor::zeros(Shape{c.batch, c.n_head, positions}, DType::kF32, tracker,
                           MemoryCategory::kActivations);
    };
    const Tensor y_full = output(c.kv_len), lse_full = lse_of(c.kv_len);
    cpu_kernels().attention_forward(cpu.device(), x.q, x.k, x.v,
                                    AttentionHeads::packed(y_full, c.n_head), lse_full);
    const Tensor y_last = output(c.query_len), lse_last = lse_of(c.query_len);
    const std::int64_t first = c.kv_len - c.query_len;
    cpu_kernels().attention_forward(cpu.device(), x.q.positions(first, c.query_len), x.k, x.v,
                                    AttentionHeads::packed(y_last, c.n_head), lse_last);

    // f32: the same row arithmetic on the same numbers (only a GEMM's blocking may differ);
    // bf16: that, then one rounding each, so at most one bf16 ulp apart.
    const double rel = dtype == DType::kF32 ? 1e-6 : std::ldexp(1.0, -7);
    const std::vector<float> full = testing::to_floats(y_full), last = testing::to_floats(y_last);
    const std::int64_t row = c.n_head * c.head_dim;
    for (std::int64_t b = 0; b < c.batch; ++b) {
      for (std::int64_t t = 0; t < c.query_len; ++t) {
        for (std::int64_t i = 0; i < row; ++i) {
          const float want = full[static_cast<std::size_t>((b * c.kv_len + first + t) * row + i)];
          const float got = last[static_cast<std::size_t>((b * c.query_len + t) * row + i)];
          ASSERT_NEAR(got, want, rel * std::fabs(want) + 1e-6)
              << "batch row " << b << ", query " << t << ", element " << i;
        }
      }
    }
    for (std::int64_t bh = 0; bh < c.batch * c.n_head; ++bh) {
      for (std::int64_t t = 0; t < c.query_len; ++t) {
        EXPECT_NEAR(lse_last.data_as<float>()[bh * c.query_len + t],
                    lse_full.data_as<float>()[bh * c.kv_len + first + t], 1e-5)
            << "lse of (batch row, head) " << bh << ", query " << t;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionLongerKeys, ::testing::Values(DType::kF32, DType::kBF16),
                         testing::dtype_test_name);

TEST(AttentionLongerKeysBackward, RefusesKeysLongerThanTheQueries) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Tensor qkv =
      Tensor::zeros(Shape{1, 4, 3 * 4}, DType::kF32, tracker, MemoryCategory::kActivations);
  const QkvHeads x = split_qkv(qkv, 2, 2);
  const Tensor dqkv =
      Tensor::zeros(qkv.shape(), DType::kF32, tracker, MemoryCategory::kActivations);
  const QkvHeads dx = split_qkv(dqkv, 2, 2);
  const Tensor y =
      Tensor::zeros(Shape{1, 1, 4}, DType::kF32, tracker, MemoryCategory::kActivations);
  const Tensor lse =
      Tensor::zeros(Shape{1, 2, 1}, DType::kF32, tracker, MemoryCategory::kActivations);
  const AttentionHeads q = x.q.positions(3, 1), o = AttentionHeads::packed(y, 2);
  cpu_kernels().attention_forward(cpu.device(), q, x.k, x.v, o, lse);
  try {
    cpu_kernels().attention_backward(cpu.device(), q, x.k, x.v, o, lse, o, dx.q.positions(3, 1),
                                     dx.k, dx.v);
    FAIL() << "a backward over a longer key sequence ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KV cache's attention has no backward"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt::nn
