// bf16 attention on oneDNN's bf16 GEMM (Note [bf16 attention on bf16 GEMMs] in
// nn/kernels/cpu/attention_cpu.cpp) against the same call with its operands widened to f32:
// forward and backward agree to the outputs' own bf16 rounding on lengths below, at and past
// the query and key blocks, grouped-query heads, and queries at the end of a longer key
// sequence. The double-precision tests (attention_tiled_test, attention_tiled_backward_test)
// run whichever path the CPU takes; this one runs both where oneDNN's bf16 GEMM has AMX, and
// elsewhere checks that the default is the widened path, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "nn/kernels/attention_heads.h"
#include "nn/kernels/cpu/attention_cpu.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

struct ProductsCase {
  std::int64_t batch, kv_len, query_len, n_head, n_kv_head, head_dim;
  std::string name() const {
    return "B" + std::to_string(batch) + " Tkv" + std::to_string(kv_len) + " Tq" +
           std::to_string(query_len) + " nh" + std::to_string(n_head) + " nkv" +
           std::to_string(n_kv_head) + " hs" + std::to_string(head_dim);
  }
  std::int64_t width() const { return (n_head + 2 * n_kv_head) * head_dim; }
};

// 100 (query blocks of 32, the last partial, 3 query heads per kv head); 257 (blocks of 64);
// 1030 (blocks of 256, key blocks of 512, 512 and 6); 300 queries at the end of 1030 keys
// (forward only: a KV cache's attention has no backward).
const ProductsCase kCases[] = {{2, 100, 100, 6, 2, 16},
                               {1, 257, 257, 2, 1, 64},
                               {1, 1030, 1030, 2, 1, 8},
                               {1, 1030, 300, 2, 1, 8}};

// One forward and backward in bf16 with the given products: q (the last query_len positions),
// k, v in place in fused rows, their gradients likewise; o, dO packed; lse f32.
struct Outputs {
  std::vector<float> o, lse, dqkv;
};
Outputs run(const ProductsCase& c, cpu::Bf16AttentionProducts products) {
  MemoryTracker tracker(Device::cpu());
  const DType bf16 = DType::kBF16;
  const Shape fused{c.batch, c.kv_len, c.width()};
  const Tensor qkv = testing::make_tensor(testing::random_values(fused.numel(), 31, bf16), fused,
                                          bf16, tracker, MemoryCategory::kActivations);
  const Tensor dqkv = Tensor::zeros(fused, bf16, tracker, MemoryCategory::kActivations);
  const Shape out{c.batch, c.query_len, c.n_head * c.head_dim};
  const Tensor y = Tensor::zeros(out, bf16, tracker, MemoryCategory::kActivations);
  const Tensor dy = testing::make_tensor(testing::random_values(out.numel(), 32, bf16), out, bf16,
                                         tracker, MemoryCategory::kActivations);
  const Tensor lse = Tensor::zeros(Shape{c.batch, c.n_head, c.query_len}, DType::kF32, tracker,
                                   MemoryCategory::kActivations);
  const QkvHeads x = split_qkv(qkv, c.n_head, c.n_kv_head);
  const QkvHeads dx = split_qkv(dqkv, c.n_head, c.n_kv_head);
  const std::int64_t first_query = c.kv_len - c.query_len;
  const AttentionHeads q = x.q.positions(first_query, c.query_len);
  const AttentionHeads dq = dx.q.positions(first_query, c.query_len);
  const AttentionHeads o = AttentionHeads::packed(y, c.n_head);
  const AttentionHeads d_o = AttentionHeads::packed(dy, c.n_head);
  cpu::attention_forward(q, x.k, x.v, o, lse, tracker, products);
  // a KV cache's attention (queries at the end of longer keys) has no backward
  if (c.query_len == c.kv_len) {
    cpu::attention_backward(q, x.k, x.v, o, lse, d_o, dq, dx.k, dx.v, tracker, products);
  }
  return {testing::to_floats(y), testing::to_floats(lse), testing::to_floats(dqkv)};
}

double rms(const std::vector<float>& values) {
  double sum = 0.0;
  for (const float v : values) sum += double{v} * v;
  return values.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(values.size()));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Each output is rounded to bf16 on both paths (2^-9 relative each) from f32 values that
// differ by summation order and by P and dS carried as two bf16 terms (16 significant bits,
// 2^-17 relative each, within sums of up to kv_len terms of either sign): so within 2^-7 of
// the element plus 2^-7 of the outputs' root mean square (the scale of a sum's cancellation).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  const double scale = rms(want), rel = std::ldexp(1.0, -7);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * (std::fabs(want[i]) + scale)) << what << " " << i;
  }
}

TEST(AttentionBf16Products, AgreeWithTheWidenedProductsToBf16Rounding) {
  if (!cpu::bf16_gemm_has_amx()) {
    GTEST_SKIP() << "no AMX bf16 GEMM here: the widened path is the only one (next test)";
  }
  for (const ProductsCase& c : kCases) {
    SCOPED_TRACE(c.name());
    const Outputs bf16 = run(c, cpu::Bf16AttentionProducts::kBf16WhereAvailable);
    const Outputs widened = run(c, cpu::Bf16AttentionProducts::kWidenedToF32);
    expect_close(bf16.o, widened.o, "o");
    // lse comes from the scores, which both paths compute from the same bf16 values in f32
    expect_close(bf16.lse, widened.lse, "lse");
    expect_close(bf16.dqkv, widened.dqkv, "dqkv");
    EXPECT_FALSE(same_bits(bf16.o, widened.o)) << "the two paths ran the same code";
  }
}

TEST(AttentionBf16Products, WithoutAmxTheDefaultIsTheWidenedPath) {
  if (cpu::bf16_gemm_has_amx()) {
    GTEST_SKIP() << "this CPU has the AMX bf16 GEMM (previous test)";
  }
  const ProductsCase& c = kCases[0];
  const Outputs by_default = run(c, cpu::Bf16AttentionProducts::kBf16WhereAvailable);
  const Outputs widened = run(c, cpu::Bf16AttentionProducts::kWidenedToF32);
  EXPECT_TRUE(same_bits(by_default.o, widened.o));
  EXPECT_TRUE(same_bits(by_default.dqkv, widened.dqkv));
}

}  // namespace
}  // namespace zt::nn
