// CUDA activation kernels against the CPU loops on the same inputs. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/random.h"
#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/math/activation_math.h"

namespace zt::nn {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(ReluCuda, MatchesCpuAtEdgeSizes) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible (cudaGetDeviceCount found none)";
  for (std::int64_t n : {0, 1, 22, (1 << 20) + 3}) {
    std::vector<float> x(static_cast<std::size_t>(n)), dy(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = standard_normal(1, i);
      dy[i] = standard_normal(2, i);
    }
    float *dx_device = nullptr, *x_device = nullptr, *y_device = nullptr, *dy_device = nullptr;
    const std::size_t bytes = x.size() * sizeof(float) + 4;
    ASSERT_EQ(cudaMalloc(&x_device, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&y_device, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy_device, bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dx_device, bytes), cudaSuccess);
    cudaMemcpy(x_device, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy_device, dy.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
    cuda::relu_forward(x_device, y_device, n, nullptr);
    cuda::relu_backward(x_device, dy_device, dx_device, n, nullptr);
    std::vector<float> y(x.size()), dx(x.size());
    cudaMemcpy(y.data(), y_device, x.size() * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(dx.data(), dx_device, x.size() * sizeof(float), cudaMemcpyDeviceToHost);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(y[i], math::relu_forward(x[i])) << "n " << n << " i " << i;
      ASSERT_EQ(dx[i], math::relu_backward(x[i], dy[i])) << "n " << n << " i " << i;
    }
    cudaFree(x_device);
    cudaFree(y_device);
    cudaFree(dy_device);
    cudaFree(dx_device);
  }
}

}  // namespace
}  // namespace zt::nn
