// CUDA ReLU forward/backward: grid-stride loops over the shared per-element math.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/cuda/cuda_check.h"
#include "nn/kernels/math/activation_math.h"

namespace zt::nn::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;

int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

__global__ void relu_forward_kernel(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    y[i] = math::relu_forward(x[i]);
  }
}

__global__ void relu_backward_kernel(const float* x, const float* dy, float* dx,
                                     std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    dx[i] = math::relu_backward(x[i], dy[i]);
  }
}

}  // namespace

void relu_forward(const float* x, float* y, std::int64_t n, void* stream) {
  if (n == 0) return;
  relu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      x, y, n);
  ZT_CUDA_CHECK(cudaGetLastError(), "relu_forward launch, " + std::to_string(n) + " elements");
}

void relu_backward(const float* x, const float* dy, float* dx, std::int64_t n, void* stream) {
  if (n == 0) return;
  relu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0,
                         static_cast<cudaStream_t>(stream)>>>(x, dy, dx, n);
  ZT_CUDA_CHECK(cudaGetLastError(), "relu_backward launch, " + std::to_string(n) + " elements");
}

}  // namespace zt::nn::cuda
