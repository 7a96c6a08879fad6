// CUDA attention row kernels against the CPU rows of the shared math on the same scores, for
// one-token, odd and longer sequences: the softmax with its lse, the probabilities recomputed
// from lse, D = rowsum(dO ∘ O) over strided heads, and dS. Skips without a GPU.
#include "nn/kernels/cuda/attention_rows_cuda.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn/kernels/math/attention_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

struct Scores {
  std::int64_t matrices;  // B * heads
  std::int64_t seq_len;
};
constexpr Scores kShapes[] = {{3, 1}, {6, 22}, {1, 257}, {4, 64}, {0, 8}};
// exp, log and the row sums differ in the last f32 bits (device expf, reduction order).
constexpr double kRel = 1e-5;
constexpr double kAbs = 1e-6;

std::string name_of(const Scores& s) {
  return "(" + std::to_string(s.matrices) + " x " + std::to_string(s.seq_len) + ")^2";
}

TEST(AttentionRowsCuda, SoftmaxMatchesCpuRowsWithLseAndZeroTail) {
  ZT_SKIP_WITHOUT_GPU();
  for (const Scores s : kShapes) {
    SCOPED_TRACE(name_of(s));
    const std::int64_t rows = s.matrices * s.seq_len;
    const auto elements = static_cast<std::size_t>(rows * s.seq_len);
    std::vector<float> p_cpu = gpu_test::inputs<float>(elements, 31, 4.0f);
    std::vector<float> lse_cpu(static_cast<std::size_t>(rows));
    DeviceBuffer<float> scores(p_cpu), lse(lse_cpu);
    for (std::int64_t r = 0; r < rows; ++r) {
      lse_cpu[static_cast<std::size_t>(r)] =
          math::attention_softmax_row(p_cpu.data() + r * s.seq_len, r % s.seq_len, s.seq_len);
    }
    cuda::attention_softmax_forward(scores.get(), lse.get(), rows, s.seq_len, s.seq_len, nullptr);
    const std::vector<float> p = scores.download();
    EXPECT_TRUE(all_near(p, p_cpu, kRel, kAbs)) << "P";
    EXPECT_TRUE(all_near(lse.download(), lse_cpu, kRel, kAbs)) << "lse";
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = r % s.seq_len + 1; j < s.seq_len; ++j) {
        ASSERT_EQ(p[static_cast<std::size_t>(r * s.seq_len + j)], 0.0f)
            << "row " << r << " j " << j;
      }
    }
  }
}

TEST(AttentionRowsCuda, ProbabilitiesAndScoreGradientMatchCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  for (const Scores s : kShapes) {
    SCOPED_TRACE(name_of(s));
    const std::int64_t rows = s.matrices * s.seq_len;
    const auto elements = static_cast<std::size_t>(rows * s.seq_len);
    const std::vector<float> scores = gpu_test::inputs<float>(elements, 41, 4.0f);
    std::vector<float> p_cpu = scores;
    std::vector<float> lse(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      lse[static_cast<std::size_t>(r)] =
          math::attention_softmax_row(p_cpu.data() + r * s.seq_len, r % s.seq_len, s.seq_len);
    }
    DeviceBuffer<float> p_dev(scores), lse_dev(lse);
    cuda::attention_probabilities(p_dev.get(), lse_dev.get(), rows, s.seq_len, nullptr);
    const std::vector<float> p = p_dev.download();
    EXPECT_TRUE(all_near(p, p_cpu, kRel, kAbs)) << "P from lse";

    const std::vector<float> dp = gpu_test::inputs<float>(elements, 42);
    const std::vector<float> d = gpu_test::inputs<float>(static_cast<std::size_t>(rows), 43);
    std::vector<float> ds_cpu = dp;
    for (std::int64_t r = 0; r < rows; ++r) {
      math::attention_score_gradient_row(p.data() + r * s.seq_len, ds_cpu.data() + r * s.seq_len,
                                         d[static_cast<std::size_t>(r)], s.seq_len);
    }
    DeviceBuffer<float> ds_dev(dp), d_dev(d);
    cuda::attention_score_gradient(p_dev.get(), ds_dev.get(), d_dev.get(), rows, s.seq_len,
                                   nullptr);
    EXPECT_TRUE(all_near(ds_dev.download(), ds_cpu, kRel, kAbs)) << "dS";
  }
}

TEST(AttentionRowsCuda, OutputDotReadsStridedHeads) {
  ZT_SKIP_WITHOUT_GPU();
  // o: heads in (B, T, 3 heads x 37 + 5 spare) rows at column 2; d_o packed (B, T, 3 x 37).
  const std::int64_t batch = 2, seq_len = 5, n_head = 3, head_dim = 37, width = 3 * 37 + 5;
  const math::HeadStrides o_strides{2, seq_len * width, width, head_dim};
  const math::HeadStrides d_o_strides{0, seq_len * n_head * head_dim, n_head * head_dim, head_dim};
  const std::vector<float> o = gpu_test::inputs<float>(batch * seq_len * width, 51);
  const std::vector<float> d_o = gpu_test::inputs<float>(batch * seq_len * n_head * head_dim, 52);
  std::vector<float> d_cpu;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t h = 0; h < n_head; ++h) {
      for (std::int64_t t = 0; t < seq_len; ++t) {
        d_cpu.push_back(math::attention_output_dot(
            o.data() + math::head_row_start(o_strides, b, t, h),
            d_o.data() + math::head_row_start(d_o_strides, b, t, h), head_dim));
      }
    }
  }
  DeviceBuffer<float> o_dev(o), d_o_dev(d_o), d_dev(std::vector<float>(d_cpu.size()));
  cuda::attention_output_dot(o_dev.get(), o_strides, d_o_dev.get(), d_o_strides, batch, n_head,
                             seq_len, head_dim, d_dev.get(), nullptr);
  EXPECT_TRUE(all_near(d_dev.download(), d_cpu, kRel, 1e-5));
}

}  // namespace
}  // namespace zt::nn
