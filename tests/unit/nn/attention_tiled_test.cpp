// The CPU's tiled attention forward (Note [Tiled attention] in nn/kernels/cpu/attention_cpu.cpp)
// against a double-precision loop, in f32 and bf16: lengths below, at and past the query and
// key blocks (32, 64, 256; 512), grouped-query heads, queries that are the last of a longer key
// sequence (a KV cache's decode step and chunk), heads read in place from fused rows; the same
// bits on every thread count; a workspace of one score block per chunk; an output that held NaN
// is overwritten.
#include <gtest/gtest.h>

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

struct TiledCase {
  std::int64_t batch, kv_len, query_len, n_head, n_kv_head, head_dim;
  std::string name() const {
    return "B" + std::to_string(batch) + " Tkv" + std::to_string(kv_len) + " Tq" +
           std::to_string(query_len) + " nh" + std::to_string(n_head) + " nkv" +
           std::to_string(n_kv_head) + " hs" + std::to_string(head_dim);
  }
};

// One token; 31 (one query block short of 32); 100 (several blocks of 32, the last partial);
// 257 (blocks of 64 past a power of two); 1030 (blocks of 256, two key blocks of 512 and a
// third of 6); a decode step and chunks of queries at the end of 1030 and 600 keys.
const TiledCase kTiledCases[] = {{2, 1, 1, 4, 2, 4},       {2, 31, 31, 2, 2, 8},
                                 {1, 100, 100, 4, 2, 8},   {1, 257, 257, 2, 1, 8},
                                 {1, 1030, 1030, 2, 1, 4}, {1, 1030, 1, 4, 2, 8},
                                 {1, 1030, 300, 2, 1, 4},  {1, 600, 100, 2, 2, 8}};

// q (the last query_len positions), k, v in place in fused rows (B, T_kv, width) and the
// outputs o (B, T_q, nh hs) and lse (B, nh, T_q).
struct TiledRun {
  TiledRun(const TiledCase& c, DType dtype, MemoryTracker& tracker)
      : fused(Shape{c.batch, c.kv_len, (c.n_head + 2 * c.n_kv_head) * c.head_dim}),
        qkv(testing::make_tensor(testing::random_values(fused.numel(), 97, dtype), fused, dtype,
                                 tracker, MemoryCategory::kActivations)),
        x(split_qkv(qkv, c.n_head, c.n_kv_head)),
        q(x.q.positions(c.kv_len - c.query_len, c.query_len)),
        y(Tensor::zeros(Shape{c.batch, c.query_len, c.n_head * c.head_dim}, dtype, tracker,
                        MemoryCategory::kActivations)),
        lse(Tensor::zeros(Shape{c.batch, c.n_head, c.query_len}, DType::kF32, tracker,
                          MemoryCategory::kActivations)) {}

  void forward(DeviceContext& device) const {
    cpu_kernels().attention_forward(device, q, x.k, x.v, AttentionHeads::packed(y, q.n_heads), lse);
  }

  Shape fused;
  Tensor qkv;
  QkvHeads x;
  AttentionHeads q;
  Tensor y, lse;
};

// softmax(q k^T / sqrt(hs)) v over the keys at or before each query's position, and lse, in
// double from the operands' values.
struct Expected {
  std::vector<double> o, lse;
};
Expected expected(const TiledCase& c, const TiledRun& run) {
  const std::vector<float> values = testing::to_floats(run.qkv);
  const auto at = [&](const AttentionHeads& heads, std::int64_t b, std::int64_t t, std::int64_t h,
                      std::int64_t d) {
    return double{values[static_cast<std::size_t>(heads.row_start(b, t, h) + d)]};
  };
  const std::int64_t hs = c.head_dim, first = c.kv_len - c.query_len;
  const std::int64_t group = c.n_head / c.n_kv_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  Expected e{std::vector<double>(static_cast<std::size_t>(run.y.numel())),
             std::vector<double>(static_cast<std::size_t>(run.lse.numel()))};
  std::vector<double> p(static_cast<std::size_t>(c.kv_len));
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t h = 0; h < c.n_head; ++h) {
      for (std::int64_t t = 0; t < c.query_len; ++t) {
        const std::int64_t position = first + t;
        double max_s = -INFINITY;
        for (std::int64_t j = 0; j <= position; ++j) {
          double s = 0.0;
          for (std::int64_t d = 0; d < hs; ++d) {
            s += at(run.x.q, b, position, h, d) * at(run.x.k, b, j, h / group, d);
          }
          p[static_cast<std::size_t>(j)] = s * scale;
          max_s = std::max(max_s, s * scale);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j <= position; ++j) {
          p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - max_s);
          sum += p[static_cast<std::size_t>(j)];
        }
        e.lse[static_cast<std::size_t>((b * c.n_head + h) * c.query_len + t)] =
            max_s + std::log(sum);
        for (std::int64_t d = 0; d < hs; ++d) {
          double o = 0.0;
          for (std::int64_t j = 0; j <= position; ++j) {
            o += p[static_cast<std::size_t>(j)] * at(run.x.v, b, j, h / group, d);
          }
          e.o[static_cast<std::size_t>(((b * c.query_len + t) * c.n_head + h) * hs + d)] = o / sum;
        }
      }
    }
  }
  return e;
}

class AttentionTiled : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionTiled, ForwardMatchesTheSoftmaxInDouble) {
  const DType dtype = GetParam();
  for (const TiledCase& c : kTiledCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const TiledRun run(c, dtype, tracker);
    // The output starts as NaN (all bits set, in f32 and bf16): the kernel writes every element
    // rather than adding into what was there.
    std::memset(run.y.data(), 0xFF, run.y.nbytes());
    run.forward(cpu.device());
    const Expected e = expected(c, run);
    // f32: the online softmax's round-off over up to 1030 keys (the untiled rows were as far
    // from double); bf16: that, then o rounded once to bf16 (half an ulp, 2^-9 relative).
    const double rel = dtype == DType::kF32 ? 1e-5 : std::ldexp(1.0, -8);
    const std::vector<float> o = testing::to_floats(run.y);
    for (std::size_t i = 0; i < o.size(); ++i) {
      ASSERT_NEAR(o[i], e.o[i], rel * std::fabs(e.o[i]) + 1e-5) << "o " << i;
    }
    for (std::size_t i = 0; i < e.lse.size(); ++i) {
      ASSERT_NEAR(run.lse.data_as<float>()[i], e.lse[i], 1e-5 * (1.0 + std::fabs(e.lse[i])))
          << "lse " << i;
    }
  }
}

TEST_P(AttentionTiled, ForwardGivesTheSameBitsOnEveryThreadCount) {
  const DType dtype = GetParam();
  for (const TiledCase& c : kTiledCases) {
    SCOPED_TRACE(c.name());
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const TiledRun run(c, dtype, tracker);
    std::vector<float> first_o, first_lse;
    for (const int threads : zt::testing::kThreadCounts) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      const zt::testing::ParallelThreads scope(threads);
      run.forward(cpu.device());
      const std::vector<float> o = testing::to_floats(run.y), lse = testing::to_floats(run.lse);
      if (first_o.empty()) {
        first_o = o;
        first_lse = lse;
        continue;
      }
      ASSERT_EQ(0, std::memcmp(o.data(), first_o.data(), o.size() * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(lse.data(), first_lse.data(), lse.size() * sizeof(float)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AttentionTiled, ::testing::Values(DType::kF32, DType::kBF16),
                         testing::dtype_test_name);

TEST(AttentionTiledWorkspace, IsOneScoreBlockPerChunkOnEveryThreadCount) {
  // T = 1030: query blocks of 256 (5 per head, the last of 6 rows), key blocks of 512; 2 heads
  // make 10 units in 5 chunks of 2 (at most 8 chunks), each with a (256, 512) f32 score block:
  // 2.5 MiB where the untiled forward held 5 (1030, 1030) matrices (20 MiB).
  const TiledCase c{1, 1030, 1030, 2, 1, 4};
  for (const int threads : zt::testing::kThreadCounts) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const zt::testing::ParallelThreads scope(threads);
    MemoryTracker tracker(Device::cpu());
    testing::CpuTestContext cpu(tracker);
    const TiledRun run(c, DType::kF32, tracker);
    tracker.reset_peaks();
    run.forward(cpu.device());
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kWorkspace), 5 * 256 * 512 * 4);
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  }
}

}  // namespace
}  // namespace zt::nn
