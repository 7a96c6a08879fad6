// The CPU's tiled attention backward (Note [Tiled attention] in nn/kernels/cpu/attention_cpu.cpp)
// against a double-precision loop, in f32 and bf16, and against finite differences: lengths
// below, at and past the query and key blocks (32, 64, 256; 512), grouped-query heads, heads
// read and written in place in fused rows; the same bits on every thread count; a workspace of
// one P and one dS block per chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"
#include "precision_check.h"
#include "support/parallel_threads.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

struct BackwardCase {
  std::int64_t batch, seq_len, n_head, n_kv_head, head_dim;
  std::string name() const {
    return "B" + std::to_string(batch) + " T" + std::to_string(seq_len) + " nh" +
           std::to_string(n_head) + " nkv" + std::to_string(n_kv_head) + " hs" +
           std::to_string(head_dim);
  }
  std::int64_t width() const { return (n_head + 2 * n_kv_head) * head_dim; }
};

// One token; 31 (one query block short of 32); 100 (several blocks of 32, the last partial,
// 3 query heads per kv head, 4 (batch row, kv head) pairs); 257 (blocks of 64 past a power of
// two); 1030 (blocks of 256, key blocks of 512, 512 and 6).
const BackwardCase kBackwardCases[] = {
    {2, 1, 4, 2, 4}, {2, 31, 2, 2, 8}, {2, 100, 6, 2, 4}, {1, 257, 2, 1, 8}, {1, 1030, 2, 1, 4}};

// q, k, v in place in fused rows (B, T, width), their gradients in place in a second fused
// tensor, o and d_o packed (B, T, nh hs), lse (B, nh, T).
struct BackwardRun {
  BackwardRun(const BackwardCase& c, DType dtype, MemoryTracker& tracker)
      : fused(Shape{c.batch, c.seq_len, c.width()}),
        qkv(testing::make_tensor(testing::random_values(fused.numel(), 61, dtype), fused, dtype,
                                 tracker, MemoryCategory::kActivations)),
        dqkv(Tensor::zeros(fused, dtype, tracker, MemoryCategory::kActivations)),
        y(Tensor::zeros(Shape{c.batch, c.seq_len, c.n_head * c.head_dim}, dtype, tracker,
                        MemoryCategory::kActivations)),
        dy(testing::make_tensor(testing::random_values(y.numel(), 62, dtype), y.shape(), dtype,
                                tracker, MemoryCategory::kActivations)),
        lse(Tensor::zeros(Shape{c.batch, c.n_head, c.seq_len}, DType::kF32, tracker,
                          MemoryCategory::kActivations)),
        x(split_qkv(qkv, c.n_head, c.n_kv_head)),
        dx(split_qkv(dqkv, c.n_head, c.n_kv_head)),
        o(AttentionHeads::packed(y, c.n_head)),
        d_o(AttentionHeads::packed(dy, c.n_head)) {}

  void forward(DeviceContext& device) const {
    cpu_kernels().attention_forward(device, x.q, x.k, x.v, o, lse);
  }
  void backward(DeviceContext& device) const {
    cpu_kernels().attention_backward(device, x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v);
  }

  Shape fused;
  Tensor qkv, dqkv, y, dy, lse;
  QkvHeads x, dx;
  AttentionHeads o, d_o;
};

// dq, dk, dv in double at dqkv's offsets, from the operands' values: per query head h (kv head
// h / group) P = causal_softmax(q k^T / sqrt(hs)), dP = dO v^T, dS = P (dP - Σ_j P dP),
// dq = dS k / sqrt(hs), dk = dS^T q / sqrt(hs), dv = P^T dO, dk and dv summed over the group.
std::vector<double> expected_gradients(const BackwardCase& c, const BackwardRun& run) {
  const std::vector<float> x = testing::to_floats(run.qkv), d_o = testing::to_floats(run.dy);
  const auto in = [&](const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
                      std::int64_t d) {
    return double{x[static_cast<std::size_t>(heads.row_start(b, t, h) + d)]};
  };
  const auto grad_out = [&](std::int64_t b, std::int64_t t, std::int64_t h, std::int64_t d) {
    return double{d_o[static_cast<std::size_t>(run.d_o.row_start(b, t, h) + d)]};
  };
  std::vector<double> grads(static_cast<std::size_t>(run.dqkv.numel()), 0.0);
  const auto out = [&](const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
                       std::int64_t d) -> double& {
    return grads[static_cast<std::size_t>(heads.row_start(b, t, h) + d)];
  };
  const std::int64_t hs = c.head_dim, group = c.n_head / c.n_kv_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  std::vector<double> p(static_cast<std::size_t>(c.seq_len)), dp(p.size());
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.n_head; ++h) {
      const std::int64_t kv = h / group;
      for (std::int64_t i = 0; i < c.seq_len; ++i) {
        double max_s = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {
          double s = 0.0, ds = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) {
            s += in(run.x.q, b, i, h, d) * in(run.x.k, b, j, kv, d);
            ds += grad_out(b, i, h, d) * in(run.x.v, b, j, kv, d);
          }
          p[static_cast<std::size_t>(j)] = s * scale;
          dp[static_cast<std::size_t>(j)] = ds;
          max_s = std::max(max_s, s * scale);
        }
        double sum = 0.0, row_dot = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) {
          p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - max_s);
          sum += p[static_cast<std::size_t>(j)];
        }
        for (std::int64_t j = 0; j <= i; ++j) {
          p[static_cast<std::size_t>(j)] /= sum;
          row_dot += p[static_cast<std::size_t>(j)] * dp[static_cast<std::size_t>(j)];
        }
        for (std::int64_t j = 0; j <= i; ++j) {
          const double pj = p[static_cast<std::size_t>(j)];
          const double ds = pj * (dp[static_cast<std::size_t>(j)] - row_dot);
          for (std::int64_t d = 0; d < hs; ++d) {
            out(run.dx.q, b, i, h, d) += scale * ds * in(run.x.k, b, j, kv, d);
            out(run.dx.k, b, j, kv, d) += scale * ds * in(run.x.q, b, i, h, d);
            out(run.dx.v, b, j, kv, d) += pj * grad_out(b, i, h, d);
          }
        }
      }
    }
  }
  return grads;
}

class AttentionTiledBackward : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionTiledBackward, MatchesTheGradientsInDouble) {
  const DType dtype = GetParam();
  for (const BackwardCase& c : kBackwardCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const BackwardRun run(c, dtype, tracker);
    run.forward(cpu.device());
    run.backward(cpu.device());
    const std::vector<double> expected = expected_gradients(c, run);
    // Each gradient sums up to 1030 terms of either sign, so its error is relative to the
    // gradients' size (their root mean square), not to the element's own value. f32: round-off
    // of those sums; bf16: o rounded to bf16 enters D_t = dO_t · O_t (2^-9 relative), and each
    // gradient is rounded once to bf16.
    double sum_squares = 0.0;
    for (const double g : expected) sum_squares += g * g;
    const double rms = std::sqrt(sum_squares / static_cast<double>(expected.size()));
    const double rel = dtype == DType::kF32 ? 2e-5 : std::ldexp(1.0, -6);
    const std::vector<float> got = testing::to_floats(run.dqkv);
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], rel * (std::fabs(expected[i]) + rms)) << "dqkv " << i;
    }
  }
}

// L = Σ o ∘ dy in double, for finite differences.
double loss(const BackwardRun& run, DeviceContext& device) {
  run.forward(device);
  double total = 0.0;
  for (std::int64_t i = 0; i < run.y.numel(); ++i) {
    total += double{run.y.data_as<float>()[i]} * run.dy.data_as<float>()[i];
  }
  return total;
}

TEST(AttentionTiledBackward, GradientsMatchFiniteDifferences) {
  // f32; about 40 elements of q, k and v per case (every stride-th), spread over the blocks
  constexpr float kStep = 1e-2f;
  constexpr std::int64_t kElementsPerCase = 40;
  for (const BackwardCase& c : kBackwardCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const BackwardRun run(c, DType::kF32, tracker);
    run.forward(cpu.device());
    run.backward(cpu.device());
    float* qkv = run.qkv.data_as<float>();
    const std::int64_t stride = std::max<std::int64_t>(1, run.qkv.numel() / kElementsPerCase);
    for (std::int64_t i = stride / 2; i < run.qkv.numel(); i += stride) {
      const float saved = qkv[i];
      qkv[i] = saved + kStep;
      const double up = loss(run, cpu.device());
      qkv[i] = saved - kStep;
      const double down = loss(run, cpu.device());
      qkv[i] = saved;
      const double numeric = (up - down) / (2.0 * kStep);
      const double analytic = run.dqkv.data_as<float>()[i];
      EXPECT_NEAR(analytic, numeric, 5e-3 + 1e-2 * std::fabs(numeric)) << "element " << i;
    }
  }
}

TEST_P(AttentionTiledBackward, GivesTheSameBitsOnEveryThreadCount) {
  const DType dtype = GetParam();
  for (const BackwardCase& c : kBackwardCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const BackwardRun run(c, dtype, tracker);
    run.forward(cpu.device());
    std::vector<float> first;
    for (const int threads : zt::testing::kThreadCounts) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      const zt::testing::ParallelThreads scope(threads);
      run.backward(cpu.device());
      const std::vector<float> grads = testing::to_floats(run.dqkv);
      if (first.empty()) {
        first = grads;
        continue;
      }
      ASSERT_EQ(0, std::memcmp(grads.data(), first.data(), grads.size() * sizeof(float)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionTiledBackward,
                         ::testing::Values(DType::kF32, DType::kBF16), testing::dtype_test_name);

TEST(AttentionTiledBackwardWorkspace, IsOnePAndOneDsBlockPerChunkOnEveryThreadCount) {
  // T = 1030: query blocks of 256, key blocks of 512; 2 batch rows x 2 kv heads make 4 chunks,
  // each with a (256, 512) f32 P and dS block: 4 MiB, where the untiled backward held a
  // (1030, 1030) P and dS per chunk (32.4 MiB). f32 operands: no widened copies.
  const BackwardCase c{2, 1030, 4, 2, 4};
  for (const int threads : zt::testing::kThreadCounts) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const zt::testing::ParallelThreads scope(threads);
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const BackwardRun run(c, DType::kF32, tracker);
    run.forward(cpu.device());
    tracker.reset_peaks();
    run.backward(cpu.device());
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 4 * 2 * 256 * 512 * 4);
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  }
}

}  // namespace
}  // namespace zt::nn
