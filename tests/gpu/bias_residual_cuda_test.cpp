// CUDA Linear bias (forward, backward) and residual adds (f32 and bf16 storage) against CPU
// loops over the same shared math, and bias backward against a double-precision column sum,
// at (0, 22), (3, 0), (1, 1), (3, 22), (37, 33) and (1024 + 3, 768). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "nn/kernels/cuda/bias_cuda.h"
#include "nn/kernels/cuda/residual_cuda.h"
#include "nn/kernels/math/bias_residual_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

struct Shape2 {
  std::int64_t rows;
  std::int64_t cols;
};
// (37, 33): a partial second column tile and rows not a multiple of the 8 row groups.
constexpr Shape2 kShapes[] = {{0, 22}, {3, 0}, {1, 1}, {3, 22}, {37, 33}, {1024 + 3, 768}};

std::string trace(const Shape2& s) {
  return "(" + std::to_string(s.rows) + ", " + std::to_string(s.cols) + ")";
}

template <typename T>
class BiasResidualCuda : public ::testing::Test {};
TYPED_TEST_SUITE(BiasResidualCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

TYPED_TEST(BiasResidualCuda, BiasAddForwardMatchesCpuExactly) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape2& s : kShapes) {
    SCOPED_TRACE(trace(s));
    const auto rows = static_cast<std::size_t>(s.rows);
    const auto cols = static_cast<std::size_t>(s.cols);
    const std::vector<float> y = gpu_test::inputs<T>(rows * cols, 81);
    const std::vector<float> bias = gpu_test::inputs<T>(cols, 82);
    std::vector<float> y_cpu(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        y_cpu[r * cols + c] = static_cast<float>(T(math::bias_add(y[r * cols + c], bias[c])));
      }
    }
    DeviceBuffer<T> y_dev(gpu_test::to_storage<T>(y)), bias_dev(gpu_test::to_storage<T>(bias));
    cuda::bias_add_forward(y_dev.get(), bias_dev.get(), s.rows, s.cols, nullptr);
    // One correctly rounded f32 add and the same rounding to T on both sides.
    EXPECT_TRUE(all_near(gpu_test::to_float(y_dev.download()), y_cpu, 0.0, 0.0));
  }
}

TYPED_TEST(BiasResidualCuda, BiasBackwardMatchesDoubleColumnSum) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape2& s : kShapes) {
    SCOPED_TRACE(trace(s));
    const auto rows = static_cast<std::size_t>(s.rows);
    const auto cols = static_cast<std::size_t>(s.cols);
    const std::vector<float> dy = gpu_test::inputs<T>(rows * cols, 83);
    // A non-zero starting gradient pins +=.
    const std::vector<float> dbias0 = gpu_test::inputs<float>(cols, 84);
    std::vector<double> want(cols), magnitude(cols);
    for (std::size_t c = 0; c < cols; ++c) {
      want[c] = dbias0[c];
      magnitude[c] = std::fabs(dbias0[c]);
      for (std::size_t r = 0; r < rows; ++r) {
        want[c] += dy[r * cols + c];
        magnitude[c] += std::fabs(dy[r * cols + c]);
      }
    }
    DeviceBuffer<T> dy_dev(gpu_test::to_storage<T>(dy));
    DeviceBuffer<float> dbias_dev(dbias0);
    cuda::bias_backward(dy_dev.get(), dbias_dev.get(), s.rows, s.cols, nullptr);
    const std::vector<float> got = dbias_dev.download();
    // Each column is at most rows/8 + 8 + 1 fp32 adds deep, each off by at most 2^-24 of a
    // partial sum bounded by Σ |terms|: the standard bound, far below one dropped row (~1).
    const double depth = static_cast<double>(rows / 8 + 8 + 1);
    for (std::size_t c = 0; c < cols; ++c) {
      const double tol = depth * std::ldexp(1.0, -24) * magnitude[c];
      ASSERT_NEAR(got[c], want[c], tol) << "column " << c;
    }
  }
}

TYPED_TEST(BiasResidualCuda, BiasBackwardIsExactOnIntegersAndBitwiseReproducible) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape2& s : kShapes) {
    SCOPED_TRACE(trace(s));
    const auto rows = static_cast<std::size_t>(s.rows);
    const auto cols = static_cast<std::size_t>(s.cols);
    // Integers in [-4, 4]: exact in bf16, and every partial sum is exact in fp32, so any
    // summation order gives the exact column sum.
    std::vector<float> ints(rows * cols);
    for (std::size_t i = 0; i < ints.size(); ++i) {
      ints[i] = std::floor(uniform01(85, i) * 9.0f) - 4.0f;
    }
    std::vector<float> want(cols, 3.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) want[c] += ints[r * cols + c];
    }
    DeviceBuffer<T> ints_dev(gpu_test::to_storage<T>(ints));
    DeviceBuffer<float> exact_dev(std::vector<float>(cols, 3.0f));
    cuda::bias_backward(ints_dev.get(), exact_dev.get(), s.rows, s.cols, nullptr);
    EXPECT_TRUE(all_near(exact_dev.download(), want, 0.0, 0.0)) << "integer column sums";

    // Rounding inputs: two runs from the same start must agree bit for bit.
    const std::vector<T> dy = gpu_test::to_storage<T>(gpu_test::inputs<T>(rows * cols, 86));
    const std::vector<float> dbias0 = gpu_test::inputs<float>(cols, 87);
    DeviceBuffer<T> dy_dev(dy);
    DeviceBuffer<float> first_dev(dbias0), second_dev(dbias0);
    cuda::bias_backward(dy_dev.get(), first_dev.get(), s.rows, s.cols, nullptr);
    cuda::bias_backward(dy_dev.get(), second_dev.get(), s.rows, s.cols, nullptr);
    const std::vector<float> first = first_dev.download();
    const std::vector<float> second = second_dev.download();
    for (std::size_t c = 0; c < cols; ++c) {
      ASSERT_EQ(zt::detail::bit_cast<std::uint32_t>(first[c]),
                zt::detail::bit_cast<std::uint32_t>(second[c]))
          << "bias_backward is not bitwise reproducible, column " << c;
    }
  }
}

TYPED_TEST(BiasResidualCuda, ResidualAddMatchesCpuExactly) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape2& s : kShapes) {
    SCOPED_TRACE(trace(s));
    const auto n = static_cast<std::size_t>(s.rows * s.cols);
    const std::vector<float> x = gpu_test::inputs<T>(n, 88);
    const std::vector<float> branch = gpu_test::inputs<T>(n, 89);
    std::vector<float> y_cpu(n);
    for (std::size_t i = 0; i < n; ++i) {
      y_cpu[i] = static_cast<float>(T(math::residual_add(x[i], branch[i])));
    }
    DeviceBuffer<T> x_dev(gpu_test::to_storage<T>(x)), branch_dev(gpu_test::to_storage<T>(branch));
    DeviceBuffer<T> y_dev(n);
    cuda::residual_add(x_dev.get(), branch_dev.get(), y_dev.get(), s.rows * s.cols, nullptr);
    EXPECT_TRUE(all_near(gpu_test::to_float(y_dev.download()), y_cpu, 0.0, 0.0)) << "y";
    // y aliasing x: the documented in-place use.
    cuda::residual_add(x_dev.get(), branch_dev.get(), x_dev.get(), s.rows * s.cols, nullptr);
    EXPECT_TRUE(all_near(gpu_test::to_float(x_dev.download()), y_cpu, 0.0, 0.0)) << "y = x";
  }
}

TYPED_TEST(BiasResidualCuda, AddIntoMatchesCpuExactly) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape2& s : kShapes) {
    SCOPED_TRACE(trace(s));
    const auto n = static_cast<std::size_t>(s.rows * s.cols);
    const std::vector<float> dst = gpu_test::inputs<T>(n, 90);
    const std::vector<float> src = gpu_test::inputs<T>(n, 91);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) {
      want[i] = static_cast<float>(T(math::residual_add(dst[i], src[i])));
    }
    DeviceBuffer<T> dst_dev(gpu_test::to_storage<T>(dst)), src_dev(gpu_test::to_storage<T>(src));
    cuda::add_into(dst_dev.get(), src_dev.get(), s.rows * s.cols, nullptr);
    EXPECT_TRUE(all_near(gpu_test::to_float(dst_dev.download()), want, 0.0, 0.0));
    EXPECT_TRUE(all_near(gpu_test::to_float(src_dev.download()), src, 0.0, 0.0)) << "src changed";
  }
}

}  // namespace
}  // namespace zt::nn
