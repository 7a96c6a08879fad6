// The CPU backend's rotary embedding ops: the half-split pairing pinned in closed form; forward
// against a double-precision loop on q and k heads read in place from a fused qkv (v and the
// padding untouched), from a non-zero start position, in f32, bf16 and f16; backward against
// finite differences of that loop; a decode step at position p agreeing with the whole
// sequence; and the f32 angle error the Note promises at a large position.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cpu_test_context.h"
#include "nn/kernels/attention_heads.h"
#include "nn/kernels/math/rope_math.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

constexpr float kTheta = 10000.0f;

// A fused (B, T, width) qkv: `pad` spare columns, then q (nh heads), k and v (nkv heads each),
// then `pad` more.
struct Geometry {
  std::int64_t batch = 2;
  std::int64_t seq_len = 5;
  std::int64_t n_head = 4;
  std::int64_t n_kv_head = 2;
  std::int64_t head_dim = 6;
  std::int64_t pad = 1;
  std::int64_t width() const { return (n_head + 2 * n_kv_head) * head_dim + 2 * pad; }
  Shape shape() const { return Shape{batch, seq_len, width()}; }
  QkvHeads heads(const Tensor& fused) const {
    return {
        AttentionHeads::columns(fused, pad, n_head, head_dim),
        AttentionHeads::columns(fused, pad + n_head * head_dim, n_kv_head, head_dim),
        AttentionHeads::columns(fused, pad + (n_head + n_kv_head) * head_dim, n_kv_head, head_dim)};
  }
};

// Every head of `heads` within `values` (its base's elements) turned in double precision by
// sign * (start + t) * theta^(-2i / hs), pair i being (i, i + hs/2).
void rotate_reference(std::vector<double>& values, const AttentionHeads& heads, std::int64_t start,
                      double sign) {
  const std::int64_t half = heads.head_dim / 2;
  for (std::int64_t b = 0; b < heads.batch; ++b) {
    for (std::int64_t t = 0; t < heads.seq_len; ++t) {
      for (std::int64_t h = 0; h < heads.n_heads; ++h) {
        double* row = values.data() + heads.row_start(b, t, h);
        for (std::int64_t i = 0; i < half; ++i) {
          const double angle = sign * static_cast<double>(start + t) *
                               std::pow(double{kTheta}, -2.0 * i / heads.head_dim);
          const double x0 = row[i];
          const double x1 = row[i + half];
          row[i] = x0 * std::cos(angle) - x1 * std::sin(angle);
          row[i + half] = x1 * std::cos(angle) + x0 * std::sin(angle);
        }
      }
    }
  }
}

std::vector<double> rope_reference(const std::vector<float>& input, const QkvHeads& heads,
                                   std::int64_t start, double sign) {
  std::vector<double> values(input.begin(), input.end());
  rotate_reference(values, heads.q, start, sign);
  rotate_reference(values, heads.k, start, sign);
  return values;
}

class RopeKernel : public ::testing::TestWithParam<DType> {};

// x = e_0 of a 4-wide head at position 1: pair 0 = (x_0, x_2) turns by 1 radian, so the half
// split gives (cos 1, 0, sin 1, 0); the interleaved pairing would give (cos 1, sin 1, 0, 0).
TEST(RopeKernel, PairsTheFirstHalfOfAHeadWithTheSecond) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  Tensor x = Tensor::zeros(Shape{1, 2, 4}, DType::kF32, tracker, MemoryCategory::kActivations);
  float* v = x.data_as<float>();
  v[0] = 1.0f;  // position 0: stays
  v[4] = 1.0f;  // position 1
  v[5] = 2.0f;  // pair 1 = (x_1, x_3) turns by 10000^(-1/2) = 0.01 radians
  cpu_kernels().rope_forward(context.device(), AttentionHeads::packed(x, 1), 0, kTheta);
  const float expected[] = {1.0f,           0.0f,
                            0.0f,           0.0f,
                            std::cos(1.0f), 2.0f * std::cos(0.01f),
                            std::sin(1.0f), 2.0f * std::sin(0.01f)};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(v[i], expected[i], 1e-6) << "element " << i;
}

// Forward turns q and k in place from start position 7 (positions 7..11); v and the padding
// keep their bits. One rounding into bf16/f16; in f32 the f32 angle errs by at most
// position 2^-24 radians (Note [Rotary angles]), ~1e-6 here.
TEST_P(RopeKernel, ForwardTurnsQAndKInPlaceFromTheStartPosition) {
  const DType dtype = GetParam();
  const Geometry g;
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const std::vector<float> input = testing::random_values(g.shape().numel(), 3, dtype);
  Tensor qkv = testing::make_tensor(input, g.shape(), dtype, tracker, MemoryCategory::kActivations);
  const QkvHeads heads = g.heads(qkv);
  const std::int64_t start = 7;
  cpu_kernels().rope_forward(context.device(), heads.q, start, kTheta);
  cpu_kernels().rope_forward(context.device(), heads.k, start, kTheta);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);
  const std::vector<double> expected = rope_reference(input, heads, start, 1.0);
  const std::vector<float> got = testing::to_floats(qkv);
  const double u = dtype == DType::kF32 ? 0.0 : testing::unit_roundoff(dtype);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double bound = u * std::fabs(expected[i]) + 4e-6 + testing::denormal_error(dtype);
    ASSERT_NEAR(got[i], expected[i], bound) << "element " << i << " in " << dtype_name(dtype);
  }
  // v and the padding: not a bit changed.
  const std::int64_t v_first = g.pad + (g.n_head + g.n_kv_head) * g.head_dim;
  for (std::int64_t row = 0; row < g.batch * g.seq_len; ++row) {
    for (std::int64_t c = 0; c < g.width(); ++c) {
      if (c >= g.pad && c < v_first) continue;
      const std::size_t i = static_cast<std::size_t>(row * g.width() + c);
      ASSERT_EQ(got[i], input[i]) << "row " << row << " column " << c;
    }
  }
}

// rope is linear, y = R x, so dL/dx of L = Σ w y is R^T w: backward on w (in a fused
// gradient tensor) must equal central differences of L through the double loop.
TEST_P(RopeKernel, BackwardMatchesFiniteDifferences) {
  const DType dtype = GetParam();
  const Geometry g;
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const std::vector<float> x = testing::random_values(g.shape().numel(), 4, DType::kF32);
  const std::vector<float> w = testing::random_values(g.shape().numel(), 5, dtype);
  Tensor dqkv = testing::make_tensor(w, g.shape(), dtype, tracker, MemoryCategory::kActivations);
  const std::int64_t start = 3;
  const QkvHeads d_heads = g.heads(dqkv);
  cpu_kernels().rope_backward(context.device(), d_heads.q, start, kTheta);
  cpu_kernels().rope_backward(context.device(), d_heads.k, start, kTheta);
  const std::vector<float> analytic = testing::to_floats(dqkv);

  const auto loss = [&](const std::vector<float>& values) {
    const std::vector<double> y = rope_reference(values, d_heads, start, 1.0);
    double sum = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += double{w[i]} * y[i];
    return sum;
  };
  const double u = dtype == DType::kF32 ? 0.0 : testing::unit_roundoff(dtype);
  std::vector<float> probe = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float h = 1e-2f;
    probe[i] = x[i] + h;
    const double plus = loss(probe);
    probe[i] = x[i] - h;
    const double minus = loss(probe);
    probe[i] = x[i];
    const double numeric = (plus - minus) / (2.0 * double{h});
    const double bound = u * std::fabs(numeric) + 1e-5 + testing::denormal_error(dtype);
    ASSERT_NEAR(analytic[i], numeric, bound) << "element " << i << " in " << dtype_name(dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RopeKernel,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
                         testing::dtype_test_name);

// A KV cache decodes position p alone with start_position = p: the heads of positions 4..5
// turned with start 4 must be the bits of the same positions of the whole sequence turned
// from 0.
TEST(RopeKernel, ADecodeStepAtPositionPMatchesTheWholeSequence) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const std::int64_t seq_len = 6;
  const std::int64_t tail = 2;
  const std::int64_t width = 16;  // 2 heads of 8
  const std::vector<float> values = testing::random_values(seq_len * width, 6, DType::kF32);
  Tensor whole = testing::make_tensor(values, Shape{1, seq_len, width}, DType::kF32, tracker,
                                      MemoryCategory::kActivations);
  const std::vector<float> tail_values(values.end() - tail * width, values.end());
  Tensor step = testing::make_tensor(tail_values, Shape{1, tail, width}, DType::kF32, tracker,
                                     MemoryCategory::kActivations);
  cpu_kernels().rope_forward(context.device(), AttentionHeads::packed(whole, 2), 0, kTheta);
  cpu_kernels().rope_forward(context.device(), AttentionHeads::packed(step, 2), seq_len - tail,
                             kTheta);
  const float* w = whole.data_as<float>() + (seq_len - tail) * width;
  for (std::int64_t i = 0; i < tail * width; ++i) {
    ASSERT_EQ(step.data_as<float>()[i], w[i]) << "element " << i;
  }
}

// Forward then backward turns by angle and back: the identity up to f32 rounding, also at a
// position where the angle itself is far from exact.
TEST(RopeKernel, BackwardUndoesForwardAtLargePositions) {
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const std::vector<float> values = testing::random_values(3 * 32, 7, DType::kF32);
  Tensor x = testing::make_tensor(values, Shape{1, 3, 32}, DType::kF32, tracker,
                                  MemoryCategory::kActivations);
  const AttentionHeads heads = AttentionHeads::packed(x, 2);
  cpu_kernels().rope_forward(context.device(), heads, 100000, 500000.0f);
  cpu_kernels().rope_backward(context.device(), heads, 100000, 500000.0f);
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_NEAR(x.data_as<float>()[i], values[i], 1e-6 * std::max(1.0f, std::fabs(values[i])));
  }
}

// Note [Rotary angles]: at position p the f32 angle p * inv_freq is one rounding of the exact
// product (inv_freq itself one rounding of theta^(-2i/hs)), so it errs by about 2 p 2^-24
// radians at most; pinned at p = 100000 against the double angle.
TEST(RopeKernel, F32AngleErrsByAtMostTwoRoundings) {
  const std::int64_t head_dim = 128;
  const std::int64_t position = 100000;
  for (std::int64_t pair = 0; pair < head_dim / 2; ++pair) {
    const double exact = static_cast<double>(position) * std::pow(500000.0, -2.0 * pair / head_dim);
    const double got = math::rope_angle(position, pair, head_dim, 500000.0f);
    ASSERT_LE(std::fabs(got - exact), 2.0 * std::ldexp(std::max(exact, 1e-30), -24)) << pair;
  }
}

}  // namespace
}  // namespace zt::nn
