// CUDA activation kernels (ReLU, GELU; f32 and bf16 storage) against the CPU loop over the
// same shared math on the same inputs, at sizes 0, 1, 22 and 2^20 + 3. Skips without a GPU.
#include "nn/kernels/cuda/activation_cuda.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn/kernels/math/activation_math.h"
#include "nn/kernels/math/gelu_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

constexpr std::int64_t kSizes[] = {0, 1, 22, (1 << 20) + 3};

template <typename T>
class ActivationCuda : public ::testing::Test {};
TYPED_TEST_SUITE(ActivationCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

// Runs forward and backward on the device and compares with the CPU loop over `cpu_forward`
// and `cpu_backward` within abs + rel * |cpu value| (rel widened by the rounding to T).
template <typename T, typename CpuForward, typename CpuBackward>
void expect_matches_cpu(void (*forward)(const T*, T*, std::int64_t, void*),
                        void (*backward)(const T*, const T*, T*, std::int64_t, void*),
                        CpuForward cpu_forward, CpuBackward cpu_backward, double rel, double abs) {
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto count = static_cast<std::size_t>(n);
    const std::vector<float> x = gpu_test::inputs<T>(count, 1, 2.0f);
    const std::vector<float> dy = gpu_test::inputs<T>(count, 2);
    std::vector<float> y_cpu(count), dx_cpu(count);
    for (std::size_t i = 0; i < count; ++i) {
      // Round as the device does when it stores T.
      y_cpu[i] = static_cast<float>(T(cpu_forward(x[i])));
      dx_cpu[i] = static_cast<float>(T(cpu_backward(x[i], dy[i])));
    }
    DeviceBuffer<T> x_dev(gpu_test::to_storage<T>(x)), dy_dev(gpu_test::to_storage<T>(dy));
    DeviceBuffer<T> y_dev(count), dx_dev(count);
    forward(x_dev.get(), y_dev.get(), n, nullptr);
    backward(x_dev.get(), dy_dev.get(), dx_dev.get(), n, nullptr);
    const double tol = rel + gpu_test::Storage<T>::kRoundingRel;
    EXPECT_TRUE(all_near(gpu_test::to_float(y_dev.download()), y_cpu, tol, abs)) << "forward";
    EXPECT_TRUE(all_near(gpu_test::to_float(dx_dev.download()), dx_cpu, tol, abs)) << "backward";
  }
}

TYPED_TEST(ActivationCuda, ReluMatchesCpuExactly) {
  ZT_SKIP_WITHOUT_GPU();
  // ReLU only selects and copies: any difference from the CPU is a bug, at any dtype.
  using T = TypeParam;
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto count = static_cast<std::size_t>(n);
    const std::vector<float> x = gpu_test::inputs<T>(count, 1);
    const std::vector<float> dy = gpu_test::inputs<T>(count, 2);
    DeviceBuffer<T> x_dev(gpu_test::to_storage<T>(x)), dy_dev(gpu_test::to_storage<T>(dy));
    DeviceBuffer<T> y_dev(count), dx_dev(count);
    cuda::relu_forward(x_dev.get(), y_dev.get(), n, nullptr);
    cuda::relu_backward(x_dev.get(), dy_dev.get(), dx_dev.get(), n, nullptr);
    const std::vector<float> y = gpu_test::to_float(y_dev.download());
    const std::vector<float> dx = gpu_test::to_float(dx_dev.download());
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(y[i], math::relu_forward(x[i])) << "i " << i;
      ASSERT_EQ(dx[i], math::relu_backward(x[i], dy[i])) << "i " << i;
    }
  }
}

TYPED_TEST(ActivationCuda, GeluMatchesCpuWithinDeviceTanhError) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  // Device tanhf is within 2 ulp of the host's and nvcc contracts a*b+c into FMAs, so f32
  // results agree to a few ulp, not bit for bit. Where 1 + tanh(u) or 1 - tanh^2(u) cancel
  // (x < -3) those ulps of tanh become absolute errors of ~1e-7 * |x dy|: hence the abs term.
  expect_matches_cpu<T>(
      cuda::gelu_forward<T>, cuda::gelu_backward<T>, [](float x) { return math::gelu_forward(x); },
      [](float x, float dy) { return math::gelu_backward(x, dy); }, 1e-5, 1e-5);
}

}  // namespace
}  // namespace zt::nn
