// Row-major cuBLAS GEMM (f32, and bf16 inputs with f32 or bf16 output) against a
// double-precision loop on the same matrices, for every transpose and padded strides.
// Skips without a GPU.
#include "nn/kernels/cuda/gemm_cublas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::DeviceBuffer;

struct GemmShape {
  std::int64_t m, n, k;
};
constexpr GemmShape kShapes[] = {{1, 1, 1}, {22, 17, 33}, {128, 96, 64}, {3, 200, 5}};
constexpr std::int64_t kPad = 3;  // extra columns per stored row: strides != widths
constexpr float kAlpha = 0.5f;
constexpr float kBeta = 0.25f;

// Stored (rows, cols + kPad) row-major matrix with seeded values T can hold.
template <typename In>
std::vector<float> matrix(std::int64_t rows, std::int64_t cols, std::uint64_t key) {
  return gpu_test::inputs<In>(static_cast<std::size_t>(rows * (cols + kPad)), key);
}

// Runs every transpose combination for every shape; `out_rel` is the rounding of C to Out.
template <typename In, typename Out>
void expect_matches_double_loop(double out_rel) {
  cuda::CublasHandle handle;
  for (const GemmShape s : kShapes) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        SCOPED_TRACE("m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
                     std::to_string(s.k) + (ta ? " A^T" : "") + (tb ? " B^T" : ""));
        const std::int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
        const std::int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
        const std::int64_t lda = a_cols + kPad, ldb = b_cols + kPad, ldc = s.n + kPad;
        const std::vector<float> a = matrix<In>(a_rows, a_cols, 81);
        const std::vector<float> b = matrix<In>(b_rows, b_cols, 82);
        const std::vector<float> c0 = matrix<Out>(s.m, s.n, 83);
        DeviceBuffer<In> a_dev(gpu_test::to_storage<In>(a)), b_dev(gpu_test::to_storage<In>(b));
        DeviceBuffer<Out> c_dev(gpu_test::to_storage<Out>(c0));
        cuda::gemm<In, Out>(handle, ta, tb, s.m, s.n, s.k, kAlpha, a_dev.get(), lda, b_dev.get(),
                            ldb, kBeta, c_dev.get(), ldc);
        const std::vector<float> c = gpu_test::to_float(c_dev.download());
        for (std::int64_t i = 0; i < s.m; ++i) {
          for (std::int64_t j = 0; j < s.n; ++j) {
            double sum = 0.0, magnitude = 0.0;
            for (std::int64_t p = 0; p < s.k; ++p) {
              const double av = a[static_cast<std::size_t>(ta ? p * lda + i : i * lda + p)];
              const double bv = b[static_cast<std::size_t>(tb ? j * ldb + p : p * ldb + j)];
              sum += av * bv;
              magnitude += std::fabs(av * bv);
            }
            const auto at = static_cast<std::size_t>(i * ldc + j);
            const double want = kAlpha * sum + kBeta * c0[at];
            // fp32 accumulation: error grows with k ulps of the summed magnitudes.
            const double tol =
                1e-6 * static_cast<double>(s.k) * magnitude + 1e-6 + out_rel * std::fabs(want);
            ASSERT_NEAR(c[at], want, tol) << "C[" << i << ", " << j << "]";
          }
        }
        // The padding columns of C are not part of the matrix and stay untouched.
        for (std::int64_t i = 0; i < s.m; ++i) {
          for (std::int64_t j = s.n; j < ldc; ++j) {
            const auto at = static_cast<std::size_t>(i * ldc + j);
            ASSERT_EQ(c[at], c0[at]) << "padding C[" << i << ", " << j << "]";
          }
        }
      }
    }
  }
}

TEST(GemmCublas, F32MatchesDoubleLoopForEveryTranspose) {
  ZT_SKIP_WITHOUT_GPU();
  expect_matches_double_loop<float, float>(0.0);
}

TEST(GemmCublas, Bf16InputsF32OutputMatchDoubleLoop) {
  ZT_SKIP_WITHOUT_GPU();
  expect_matches_double_loop<BF16, float>(0.0);
}

TEST(GemmCublas, Bf16InputsBf16OutputMatchDoubleLoop) {
  ZT_SKIP_WITHOUT_GPU();
  expect_matches_double_loop<BF16, BF16>(gpu_test::Storage<BF16>::kRoundingRel);
}

TEST(GemmCublas, EmptyOutputDoesNothing) {
  ZT_SKIP_WITHOUT_GPU();
  cuda::CublasHandle handle;
  DeviceBuffer<float> a(4), b(4), c(4);
  EXPECT_NO_THROW((cuda::gemm<float, float>(handle, false, false, 0, 2, 2, 1.0f, a.get(), 2,
                                            b.get(), 2, 0.0f, c.get(), 2)));
}

}  // namespace
}  // namespace zt::nn
