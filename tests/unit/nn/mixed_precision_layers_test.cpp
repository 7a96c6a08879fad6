// Every layer in bf16 and f16 against its f32 path on the same representable inputs: f32
// arithmetic, outputs rounded once, gradients accumulated in f32, scratch freed per call.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "nn/kernels/cpu/gemm_cpu.h"
#include "nn/layers/causal_self_attention.h"
#include "nn/layers/embedding.h"
#include "nn/layers/gelu.h"
#include "nn/layers/layer_norm.h"
#include "nn/layers/linear.h"
#include "nn/layers/relu.h"
#include "nn/layers/residual.h"
#include "nn/layers/sequential.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::expect_bitwise_equal;
using testing::expect_normwise_close;
using testing::expect_within_roundings;
using testing::random_case;
using testing::run_in_dtype;
using testing::unit_roundoff;

// Note [Single-layer bounds]: a layer's low-precision path widens its operands exactly to
// the f32 numbers the f32 path sees and runs the same f32 code on them (the same sgemm call,
// the same row math), so before the final store its result is bit-identical to the f32
// path's, whatever the reduction length; the one RNE store then errs by at most u |ref|
// (Note [Unit roundoff]). Parameter gradients are never rounded: they are the f32 path's
// bits. Accumulating a length-K sum in bf16/f16 instead would err by up to ~K u / 2 of the
// sum of |terms|, far outside a one-rounding bound at the K = 64..96 used here. The one
// exception: bf16 Linear on a CPU with a bf16 GEMM sums the same products in another order.
class MixedPrecision : public ::testing::TestWithParam<DType> {};

TEST_P(MixedPrecision, LinearRoundsOutputsOnceAndKeepsF32Gradients) {
  const DType dtype = GetParam();
  Linear linear("fc", 96, 24, true);
  const auto c = random_case(linear, Shape{3, 8, 96}, 3 * 8 * 24, 1, dtype);
  const auto ref = run_in_dtype(linear, DType::kF32, c);
  const auto low = run_in_dtype(linear, dtype, c);
  if (dtype == DType::kBF16 && cpu::bf16_gemm_available()) {
    // A bf16 GEMM: the same exact products (bf16 x bf16 fits in f32) summed in f32 in the
    // library's own order, so before the store it differs from the f32 path by f32
    // reassociation only, ~K 2^-24 of the terms, far below one bf16 rounding.
    const double f32_reassociation = 1e-5;
    expect_normwise_close(low.output, ref.output, unit_roundoff(dtype) + f32_reassociation, "y");
    expect_normwise_close(low.grad_input, ref.grad_input, unit_roundoff(dtype) + f32_reassociation,
                          "dx");
    expect_normwise_close(low.grads[0], ref.grads[0], f32_reassociation, "dW");
  } else {
    expect_within_roundings(low.output, ref.output, 1, dtype, "y");
    expect_within_roundings(low.grad_input, ref.grad_input, 1, dtype, "dx");
    expect_bitwise_equal(low.grads[0], ref.grads[0], "dW");
  }
  expect_bitwise_equal(low.grads[1], ref.grads[1], "db");
  // Widened operands or the f32 result went through tracked f32 scratch; the f32 path used
  // its tensors in place.
  EXPECT_GT(low.workspace_peak_bytes, 0);
  EXPECT_EQ(ref.workspace_peak_bytes, 0);
}

// max(x, 0) and its mask of dy are exact on representable numbers: no rounding at all.
TEST_P(MixedPrecision, ReluIsExact) {
  const DType dtype = GetParam();
  Relu relu;
  const auto c = random_case(relu, Shape{4, 33}, 4 * 33, 2, dtype);
  const auto ref = run_in_dtype(relu, DType::kF32, c);
  const auto low = run_in_dtype(relu, dtype, c);
  expect_bitwise_equal(low.output, ref.output, "y");
  expect_bitwise_equal(low.grad_input, ref.grad_input, "dx");
}

TEST_P(MixedPrecision, GeluRoundsOnce) {
  const DType dtype = GetParam();
  Gelu gelu;
  const auto c = random_case(gelu, Shape{4, 33}, 4 * 33, 3, dtype);
  const auto ref = run_in_dtype(gelu, DType::kF32, c);
  const auto low = run_in_dtype(gelu, dtype, c);
  expect_within_roundings(low.output, ref.output, 1, dtype, "y");
  expect_within_roundings(low.grad_input, ref.grad_input, 1, dtype, "dx");
}

TEST_P(MixedPrecision, LayerNormRoundsOnceAndKeepsF32Gradients) {
  const DType dtype = GetParam();
  LayerNorm norm("ln", 64);
  const auto c = random_case(norm, Shape{2, 6, 64}, 2 * 6 * 64, 4, dtype);
  const auto ref = run_in_dtype(norm, DType::kF32, c);
  const auto low = run_in_dtype(norm, dtype, c);
  expect_within_roundings(low.output, ref.output, 1, dtype, "y");
  expect_within_roundings(low.grad_input, ref.grad_input, 1, dtype, "dx");
  expect_bitwise_equal(low.grads[0], ref.grads[0], "dweight");
  expect_bitwise_equal(low.grads[1], ref.grads[1], "dbias");
}

TEST_P(MixedPrecision, EmbeddingRoundsOnceAndKeepsF32Gradients) {
  const DType dtype = GetParam();
  Embedding embedding(13, 6, 16);
  std::vector<std::int32_t> ids(3 * 6);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((5 * i + 2) % 13);
  auto c = random_case(embedding, Shape{3, 6}, 3 * 6 * 16, 5, dtype);
  c.ids = Tensor::wrap(ids.data(), Shape{3, 6}, DType::kI32);
  const auto ref = run_in_dtype(embedding, DType::kF32, c);
  const auto low = run_in_dtype(embedding, dtype, c);
  expect_within_roundings(low.output, ref.output, 1, dtype, "out");
  expect_bitwise_equal(low.grads[0], ref.grads[0], "dwte");
  expect_bitwise_equal(low.grads[1], ref.grads[1], "dwpe");
}

// y = round(x + round(m)): with m_low = m (1 + d1), y_low = (x + m_low)(1 + d2), |d| <= u,
// y_low - y = y d2 + m d1 (1 + d2), so |y_low - y| <= u |y| + u (1 + u) |m|; the same holds
// for dx = round(dy + round(dm)). The child's dW sees the f32 path's dy and x: exact.
TEST_P(MixedPrecision, ResidualRoundsTheBranchAndTheSum) {
  const DType dtype = GetParam();
  Residual residual(std::make_unique<Linear>("fc", 48, 48, true));
  Linear branch("fc", 48, 48, true);
  const auto c = random_case(residual, Shape{5, 48}, 5 * 48, 6, dtype);
  const auto ref = run_in_dtype(residual, DType::kF32, c);
  const auto ref_branch = run_in_dtype(branch, DType::kF32, c);
  const auto low = run_in_dtype(residual, dtype, c);
  const double u = testing::unit_roundoff(dtype);
  const auto bounds = [&](const std::vector<float>& sum, const std::vector<float>& part) {
    std::vector<double> b(sum.size());
    for (std::size_t i = 0; i < b.size(); ++i) {
      b[i] = u * std::fabs(sum[i]) + u * (1 + u) * std::fabs(part[i]) +
             2 * testing::denormal_error(dtype);
    }
    return b;
  };
  testing::expect_within(low.output, ref.output, bounds(ref.output, ref_branch.output), "y");
  testing::expect_within(low.grad_input, ref.grad_input,
                         bounds(ref.grad_input, ref_branch.grad_input), "dx");
  if (dtype == DType::kBF16 && cpu::bf16_gemm_available()) {
    expect_normwise_close(low.grads[0], ref.grads[0], 1e-5, "dW");  // f32 reassociation only
  } else {
    expect_bitwise_equal(low.grads[0], ref.grads[0], "dW");
  }
  expect_bitwise_equal(low.grads[1], ref.grads[1], "db");
}

// Note [Composite bounds]: inside a composite the low-precision path rounds intermediates
// (h = round(W1 x + b1) here; qkv, y, dy, dqkv and the saved P in attention), each by at
// most u relative. A downstream length-K dot product turns a perturbation of u |a_i| into
// at most u sum_i |a_i b_i|, i.e. u times |result| times the sum's condition number
// sum|a b| / |sum a b|. Measured against max |ref| (normwise) the zero-mean O(1) data here
// keep that factor near 1 per stage (the independent rounding errors partly cancel: the
// errors seen are 0.3..0.6 R u), so with R rounded stages on the longest path we allow
// 2 R u; rounding inside each length-K sum instead would add up to K u / 2 per stage.
TEST_P(MixedPrecision, SequentialStaysWithinItsRoundedStages) {
  const DType dtype = GetParam();
  Sequential seq;
  seq.add(std::make_unique<Linear>("a", 32, 48, true));
  seq.add(std::make_unique<Relu>());
  seq.add(std::make_unique<Linear>("b", 48, 16, true));
  const auto c = random_case(seq, Shape{4, 8, 32}, 4 * 8 * 16, 7, dtype);
  const auto ref = run_in_dtype(seq, DType::kF32, c);
  const auto low = run_in_dtype(seq, dtype, c);
  const double u = testing::unit_roundoff(dtype);
  expect_normwise_close(low.output, ref.output, 2 * 2 * u, "y");           // h, y
  expect_normwise_close(low.grad_input, ref.grad_input, 2 * 2 * u, "dx");  // dh, dx
  expect_normwise_close(low.grads[0], ref.grads[0], 2 * 1 * u, "a.dW");    // dh
  expect_normwise_close(low.grads[1], ref.grads[1], 2 * 1 * u, "a.db");
  expect_normwise_close(low.grads[2], ref.grads[2], 2 * 1 * u, "b.dW");  // h
  expect_bitwise_equal(low.grads[3], ref.grads[3], "b.db");              // only dy, unrounded
}

// Rounded stages on the longest path (Note [Composite bounds]): forward qkv, y, out (3);
// backward dy, P, qkv, dqkv, dx (5, dx through all the forward ones too: 8).
TEST_P(MixedPrecision, CausalSelfAttentionStaysWithinItsRoundedStages) {
  const DType dtype = GetParam();
  CausalSelfAttention attention("attn", 32, 4, 0.02f);
  const auto c = random_case(attention, Shape{2, 7, 32}, 2 * 7 * 32, 8, dtype);
  const auto ref = run_in_dtype(attention, DType::kF32, c);
  const auto low = run_in_dtype(attention, dtype, c);
  const double u = testing::unit_roundoff(dtype);
  expect_normwise_close(low.output, ref.output, 2 * 3 * u, "out");
  expect_normwise_close(low.grad_input, ref.grad_input, 2 * 8 * u, "dx");
  const char* names[] = {"qkv.weight", "qkv.bias", "proj.weight", "proj.bias"};
  for (std::size_t p = 0; p < 4; ++p) {
    expect_normwise_close(low.grads[p], ref.grads[p], 2 * 8 * u, names[p]);
  }
  expect_bitwise_equal(low.grads[3], ref.grads[3], "proj.bias");  // only dy, unrounded
}

INSTANTIATE_TEST_SUITE_P(LowPrecision, MixedPrecision, ::testing::Values(DType::kBF16, DType::kF16),
                         testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
