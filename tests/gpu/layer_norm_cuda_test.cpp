// CUDA layer norm (f32 and bf16 storage) against the CPU rows of the shared math on the same
// inputs, for narrow, odd, GPT-wide and wider-than-shared-memory rows. Skips without a GPU.
#include "nn/kernels/cuda/layer_norm_cuda.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn/kernels/math/layer_norm_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

struct RowShape {
  std::int64_t rows;
  std::int64_t channels;
};
// (2, 7000) is past the kernel's 6144-channel shared-memory limit: the global-atomics path.
constexpr RowShape kShapes[] = {{1, 1}, {3, 22}, {64, 768}, {2, 7000}, {0, 16}};
constexpr float kEps = 1e-5f;
// Reduction order differs (warp butterflies vs a serial loop): a few f32 ulps per row sum.
constexpr double kF32Rel = 2e-5;
constexpr double kF32Abs = 2e-5;

template <typename T>
class LayerNormCuda : public ::testing::Test {};
TYPED_TEST_SUITE(LayerNormCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

template <typename T>
std::vector<float> rounded(std::vector<float> values) {
  for (float& v : values) v = static_cast<float>(T(v));
  return values;
}

TYPED_TEST(LayerNormCuda, ForwardMatchesCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const RowShape s : kShapes) {
    SCOPED_TRACE("shape (" + std::to_string(s.rows) + ", " + std::to_string(s.channels) + ")");
    const auto rows = static_cast<std::size_t>(s.rows);
    const auto channels = static_cast<std::size_t>(s.channels);
    // An offset mean and a spread of 3 exercise the two-pass variance.
    std::vector<float> x = gpu_test::inputs<T>(rows * channels, 11, 3.0f);
    for (float& v : x) v = static_cast<float>(T(v + 2.0f));
    std::vector<float> weight = gpu_test::inputs<T>(channels, 12, 0.2f);
    for (float& v : weight) v = static_cast<float>(T(v + 1.0f));
    const std::vector<float> bias = gpu_test::inputs<T>(channels, 13, 0.5f);

    std::vector<float> y_cpu(rows * channels), mean_cpu(rows), rstd_cpu(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      math::layer_norm_forward_row(x.data() + r * channels, weight.data(), bias.data(), s.channels,
                                   kEps, y_cpu.data() + r * channels, &mean_cpu[r], &rstd_cpu[r]);
    }
    DeviceBuffer<T> x_dev(gpu_test::to_storage<T>(x)), w_dev(gpu_test::to_storage<T>(weight)),
        b_dev(gpu_test::to_storage<T>(bias)), y_dev(rows * channels);
    DeviceBuffer<float> mean_dev(rows), rstd_dev(rows);
    cuda::layer_norm_forward(x_dev.get(), w_dev.get(), b_dev.get(), s.rows, s.channels, kEps,
                             y_dev.get(), mean_dev.get(), rstd_dev.get(), nullptr);
    const double y_rel = kF32Rel + gpu_test::Storage<T>::kRoundingRel;
    EXPECT_TRUE(all_near(gpu_test::to_float(y_dev.download()), rounded<T>(y_cpu), y_rel, kF32Abs))
        << "y";
    EXPECT_TRUE(all_near(mean_dev.download(), mean_cpu, kF32Rel, kF32Abs)) << "mean";
    EXPECT_TRUE(all_near(rstd_dev.download(), rstd_cpu, kF32Rel, kF32Abs)) << "rstd";
  }
}

TYPED_TEST(LayerNormCuda, BackwardMatchesCpuRowsAndAccumulatesParameterGrads) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const RowShape s : kShapes) {
    SCOPED_TRACE("shape (" + std::to_string(s.rows) + ", " + std::to_string(s.channels) + ")");
    const auto rows = static_cast<std::size_t>(s.rows);
    const auto channels = static_cast<std::size_t>(s.channels);
    const std::vector<float> x = gpu_test::inputs<T>(rows * channels, 21, 2.0f);
    const std::vector<float> dy = gpu_test::inputs<T>(rows * channels, 22);
    std::vector<float> weight = gpu_test::inputs<T>(channels, 23, 0.2f);
    for (float& v : weight) v = static_cast<float>(T(v + 1.0f));
    // Non-zero starting gradients pin that dweight/dbias are accumulated, not overwritten.
    const std::vector<float> dweight_start = gpu_test::inputs<float>(channels, 24);
    const std::vector<float> dbias_start = gpu_test::inputs<float>(channels, 25);

    // Statistics from the CPU forward feed both backward passes, so only backward differs.
    std::vector<float> y(rows * channels), mean(rows), rstd(rows);
    std::vector<float> bias(channels, 0.0f);
    std::vector<float> dx_cpu(rows * channels);
    std::vector<float> dweight_cpu = dweight_start, dbias_cpu = dbias_start;
    for (std::size_t r = 0; r < rows; ++r) {
      math::layer_norm_forward_row(x.data() + r * channels, weight.data(), bias.data(), s.channels,
                                   kEps, y.data() + r * channels, &mean[r], &rstd[r]);
      math::layer_norm_backward_row(
          dy.data() + r * channels, x.data() + r * channels, weight.data(), mean[r], rstd[r],
          s.channels, dx_cpu.data() + r * channels, dweight_cpu.data(), dbias_cpu.data());
    }
    DeviceBuffer<T> x_dev(gpu_test::to_storage<T>(x)), dy_dev(gpu_test::to_storage<T>(dy)),
        w_dev(gpu_test::to_storage<T>(weight)), dx_dev(rows * channels);
    DeviceBuffer<float> mean_dev(mean), rstd_dev(rstd), dw_dev(dweight_start), db_dev(dbias_start);
    cuda::layer_norm_backward(dy_dev.get(), x_dev.get(), w_dev.get(), mean_dev.get(),
                              rstd_dev.get(), s.rows, s.channels, dx_dev.get(), dw_dev.get(),
                              db_dev.get(), nullptr);
    const double dx_rel = kF32Rel + gpu_test::Storage<T>::kRoundingRel;
    // dx subtracts two row means from g: cancellation makes the error absolute, ~ rstd ulps.
    EXPECT_TRUE(all_near(gpu_test::to_float(dx_dev.download()), rounded<T>(dx_cpu), dx_rel, 1e-4))
        << "dx";
    // Parameter grads are fp32 sums over rows in atomic (unordered) order.
    EXPECT_TRUE(all_near(dw_dev.download(), dweight_cpu, 1e-4, 1e-4)) << "dweight";
    EXPECT_TRUE(all_near(db_dev.download(), dbias_cpu, 1e-4, 1e-4)) << "dbias";
  }
}

}  // namespace
}  // namespace zt::nn
