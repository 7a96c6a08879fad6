// The CPU backend's attention ops: forward and backward against the formula the old
// (B, nh, T, T)-saving kernels computed, written as a double-precision loop; gradients against
// finite differences; grouped-query heads; heads read and written in place in wider rows; and
// scores kept one block per chunk at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

struct Case {
  std::int64_t batch;
  std::int64_t seq_len;
  std::int64_t n_head;
  std::int64_t n_kv_head;
  std::int64_t head_dim;
  std::int64_t pad;  // spare columns before q and after v in the fused rows
  std::string name() const {
    return "B" + std::to_string(batch) + " T" + std::to_string(seq_len) + " nh" +
           std::to_string(n_head) + " nkv" + std::to_string(n_kv_head) + " hs" +
           std::to_string(head_dim) + " pad" + std::to_string(pad);
  }
  std::int64_t width() const { return (n_head + 2 * n_kv_head) * head_dim + 2 * pad; }
};

// Multi-head, grouped-query (2 and 6 query heads per kv head), one token, and lengths that
// are no multiple of any block size (7, 9, 33 = one past a warp).
const Case kCases[] = {{2, 7, 2, 2, 4, 0},
                       {2, 7, 4, 2, 3, 1},
                       {1, 9, 6, 1, 2, 2},
                       {3, 1, 4, 2, 4, 1},
                       {1, 33, 2, 2, 5, 0}};

// The operands of one case on the CPU: q, k, v side by side in one fused tensor (B, T, width)
// with `pad` spare columns at each end, o and d_o packed, dq, dk, dv in a second fused tensor.
struct Operands {
  Operands(const Case& c, MemoryTracker& tracker, std::uint64_t seed)
      : qkv(fused(c, tracker)),
        dqkv(fused(c, tracker)),
        y(Tensor::zeros(Shape{c.batch, c.seq_len, c.n_head * c.head_dim}, DType::kF32, tracker,
                        MemoryCategory::kActivations)),
        dy(Tensor::zeros(y.shape(), DType::kF32, tracker, MemoryCategory::kActivations)),
        lse(Tensor::zeros(Shape{c.batch, c.n_head, c.seq_len}, DType::kF32, tracker,
                          MemoryCategory::kActivations)),
        x(heads_of(c, qkv)),
        dx(heads_of(c, dqkv)),
        o(AttentionHeads::packed(y, c.n_head)),
        d_o(AttentionHeads::packed(dy, c.n_head)) {
    for (std::int64_t i = 0; i < qkv.numel(); ++i) {
      qkv.data_as<float>()[i] = standard_normal(seed, static_cast<std::uint64_t>(i));
      dqkv.data_as<float>()[i] = kSentinel;  // every head overwritten; the padding kept
    }
    for (std::int64_t i = 0; i < dy.numel(); ++i) {
      dy.data_as<float>()[i] = standard_normal(seed + 1, static_cast<std::uint64_t>(i));
    }
  }

  static constexpr float kSentinel = 1234.5f;

  static Tensor fused(const Case& c, MemoryTracker& tracker) {
    return Tensor::zeros(Shape{c.batch, c.seq_len, c.width()}, DType::kF32, tracker,
                         MemoryCategory::kActivations);
  }
  static QkvHeads heads_of(const Case& c, const Tensor& fused_rows) {
    const std::int64_t q_width = c.n_head * c.head_dim, kv_width = c.n_kv_head * c.head_dim;
    return {
        AttentionHeads::columns(fused_rows, c.pad, c.n_head, c.head_dim),
        AttentionHeads::columns(fused_rows, c.pad + q_width, c.n_kv_head, c.head_dim),
        AttentionHeads::columns(fused_rows, c.pad + q_width + kv_width, c.n_kv_head, c.head_dim)};
  }

  void forward(DeviceContext& device) const {
    cpu_kernels().attention_forward(device, x.q, x.k, x.v, o, lse);
  }
  void backward(DeviceContext& device) const {
    cpu_kernels().attention_backward(device, x.q, x.k, x.v, o, lse, d_o, dx.q, dx.k, dx.v);
  }

  Tensor qkv, dqkv, y, dy, lse;
  QkvHeads x, dx;
  AttentionHeads o, d_o;
};

double at(const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
          std::int64_t d) {
  return heads.base.data_as<float>()[heads.row_start(b, t, h) + d];
}

// The old kernels' formula in double: per query head h (kv head h / group),
//   P = causal_softmax(q k^T / sqrt(hs)) (max subtracted), o = P v;
//   dP = dO v^T;  dS = P (dP - rowsum(P dP));  dq = dS k / sqrt(hs);  dk = dS^T q / sqrt(hs);
//   dv = P^T dO, dk and dv summed over the query heads of a kv head.
// Results are in the operands' own layouts (dq, dk, dv at dx's offsets), lse (B, nh, T).
struct Reference {
  std::vector<double> o, lse, dqkv;
};
Reference reference(const Case& c, const Operands& x) {
  const std::int64_t t_len = c.seq_len, hs = c.head_dim, group = c.n_head / c.n_kv_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  Reference r{std::vector<double>(static_cast<std::size_t>(x.y.numel()), 0.0),
              std::vector<double>(static_cast<std::size_t>(x.lse.numel()), 0.0),
              std::vector<double>(static_cast<std::size_t>(x.dqkv.numel()), 0.0)};
  const auto out = [&](const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
                       std::int64_t d) -> double& {
    return r.dqkv[static_cast<std::size_t>(heads.row_start(b, t, h) + d)];
  };
  const auto square = [&] { return std::vector<double>(static_cast<std::size_t>(t_len * t_len)); };
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.n_head; ++h) {
      const std::int64_t kv = h / group;
      std::vector<double> p = square(), dp = square();
      const auto ij = [&](std::int64_t i, std::int64_t j) {
        return static_cast<std::size_t>(i * t_len + j);
      };
      for (std::int64_t i = 0; i < t_len; ++i) {
        double max_s = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {
          double s = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) s += at(x.x.q, b, i, h, d) * at(x.x.k, b, j, kv, d);
          p[ij(i, j)] = s * scale;
          max_s = std::max(max_s, s * scale);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) sum += std::exp(p[ij(i, j)] - max_s);
        for (std::int64_t j = 0; j <= i; ++j) p[ij(i, j)] = std::exp(p[ij(i, j)] - max_s) / sum;
        r.lse[static_cast<std::size_t>((b * c.n_head + h) * t_len + i)] = max_s + std::log(sum);
        for (std::int64_t d = 0; d < hs; ++d) {
          double o = 0.0;
          for (std::int64_t j = 0; j <= i; ++j) o += p[ij(i, j)] * at(x.x.v, b, j, kv, d);
          r.o[static_cast<std::size_t>(x.o.row_start(b, i, h) + d)] = o;
        }
        double row_dot = 0.0;  // rowsum(P dP)
        for (std::int64_t j = 0; j <= i; ++j) {
          double s = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) s += at(x.d_o, b, i, h, d) * at(x.x.v, b, j, kv, d);
          dp[ij(i, j)] = s;
          row_dot += p[ij(i, j)] * s;
        }
        for (std::int64_t j = 0; j <= i; ++j) {
          const double ds = p[ij(i, j)] * (dp[ij(i, j)] - row_dot);
          for (std::int64_t d = 0; d < hs; ++d) {
            out(x.dx.q, b, i, h, d) += scale * ds * at(x.x.k, b, j, kv, d);
            out(x.dx.k, b, j, kv, d) += scale * ds * at(x.x.q, b, i, h, d);
            out(x.dx.v, b, j, kv, d) += p[ij(i, j)] * at(x.d_o, b, i, h, d);
          }
        }
      }
    }
  }
  return r;
}

// Whether column `col` of the fused rows is padding (neither q, k nor v).
bool is_padding(const Case& c, std::int64_t index) {
  const std::int64_t col = index % c.width();
  return col < c.pad || col >= c.width() - c.pad;
}

TEST(AttentionKernel, ForwardAndBackwardMatchTheOldFormulaInDouble) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const Operands x(c, tracker, 81);
    x.forward(cpu.device());
    x.backward(cpu.device());
    const Reference r = reference(c, x);
    for (std::int64_t i = 0; i < x.y.numel(); ++i) {
      EXPECT_NEAR(x.y.data_as<float>()[i], r.o[static_cast<std::size_t>(i)], 2e-6) << "o " << i;
    }
    for (std::int64_t i = 0; i < x.lse.numel(); ++i) {
      EXPECT_NEAR(x.lse.data_as<float>()[i], r.lse[static_cast<std::size_t>(i)], 2e-6)
          << "lse " << i;
    }
    for (std::int64_t i = 0; i < x.dqkv.numel(); ++i) {
      const float got = x.dqkv.data_as<float>()[i];
      if (is_padding(c, i)) {
        EXPECT_EQ(got, Operands::kSentinel) << "padding column written at " << i;
      } else {
        EXPECT_NEAR(got, r.dqkv[static_cast<std::size_t>(i)], 1e-5) << "dqkv " << i;
      }
    }
  }
}

// L = Σ o ∘ dy in double, for finite differences.
double loss(const Operands& x, DeviceContext& device) {
  x.forward(device);
  double total = 0.0;
  for (std::int64_t i = 0; i < x.y.numel(); ++i) {
    total += double{x.y.data_as<float>()[i]} * x.dy.data_as<float>()[i];
  }
  return total;
}

TEST(AttentionKernel, GradientsMatchFiniteDifferences) {
  constexpr float kStep = 1e-2f;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const Operands x(c, tracker, 82);
    x.forward(cpu.device());
    x.backward(cpu.device());
    float* qkv = x.qkv.data_as<float>();
    for (std::int64_t i = 0; i < x.qkv.numel(); ++i) {
      if (is_padding(c, i)) continue;
      const float saved = qkv[i];
      qkv[i] = saved + kStep;
      const double up = loss(x, cpu.device());
      qkv[i] = saved - kStep;
      const double down = loss(x, cpu.device());
      qkv[i] = saved;
      const double numeric = (up - down) / (2.0 * kStep);
      const double analytic = x.dqkv.data_as<float>()[i];
      EXPECT_NEAR(analytic, numeric, 5e-3 + 1e-2 * std::fabs(numeric)) << "element " << i;
    }
  }
}

TEST(AttentionKernel, OneTokenAttendsOnlyToItself) {
  const Case c{2, 1, 4, 2, 3, 0};
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Operands x(c, tracker, 83);
  x.forward(cpu.device());
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.n_head; ++h) {
      double score = 0.0;
      for (std::int64_t d = 0; d < c.head_dim; ++d) {
        EXPECT_EQ(at(x.o, b, 0, h, d), at(x.x.v, b, 0, h / 2, d)) << "o = v of its kv head";
        score += at(x.x.q, b, 0, h, d) * at(x.x.k, b, 0, h / 2, d);
      }
      EXPECT_NEAR(x.lse.data_as<float>()[b * c.n_head + h], score / std::sqrt(3.0), 1e-6);
    }
  }
}

TEST(AttentionKernel, KeepsScoresOfOneHeadPerChunkAtATime) {
  // f32: no widened copies, so the workspace is one score block per chunk (Note [Attention
  // chunks]): forward 12 (batch, head, query block) units, each block the whole (11, 11), in
  // 6 chunks of 2 (Note [Tiled attention]), backward a P and a dS block (again the whole
  // (11, 11)) for 6 (batch, kv head) pairs in 6 chunks; nothing of (B, nh, T, T), on any
  // thread count. 24 pairs would still be 8 chunks (of 3). A block's rows of 11 keys are
  // 16 apart (attention_row_stride).
  const Case c{3, 11, 4, 2, 4, 0};
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Operands x(c, tracker, 84);
  const std::int64_t block_bytes = c.seq_len * 16 * 4;
  tracker.reset_peaks();
  x.forward(cpu.device());
  EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 6 * block_bytes);
  tracker.reset_peaks();
  x.backward(cpu.device());
  EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 2 * 6 * block_bytes);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
}

TEST(AttentionKernel, RejectsKvHeadsThatDoNotDivideTheQueryHeads) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  const Tensor qkv = Tensor::zeros(Shape{1, 2, 3 * 2 + 2 * 2 * 2}, DType::kF32, tracker,
                                   MemoryCategory::kActivations);
  const QkvHeads x = split_qkv(qkv, 3, 2);
  const Tensor y =
      Tensor::zeros(Shape{1, 2, 6}, DType::kF32, tracker, MemoryCategory::kActivations);
  const Tensor lse =
      Tensor::zeros(Shape{1, 3, 2}, DType::kF32, tracker, MemoryCategory::kActivations);
  EXPECT_THROW(cpu_kernels().attention_forward(cpu.device(), x.q, x.k, x.v,
                                               AttentionHeads::packed(y, 3), lse),
               Error);
}

}  // namespace
}  // namespace zt::nn
