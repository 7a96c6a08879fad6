// CUDA SGD and Adam/AdamW: grid-stride loops calling optim::math once per element.
#include <cuda_runtime.h>

#include <string>

#include "core/error.h"
#include "optim/cuda/optimizer_cuda.h"

namespace zt::optim::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr std::int64_t kMaxBlocks = 65535;

int blocks_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// optim links only to core, so it cannot use nn's ZT_CUDA_CHECK; launches are its only CUDA
// calls, and this names the kernel and the size as that macro would.
void check_launch(const char* kernel, std::int64_t n) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA call cudaGetLastError failed (") + kernel + " launch, " +
                std::to_string(n) + " elements): " + cudaGetErrorString(status));
  }
}

template <typename G>
__global__ void sgd_kernel(float* params, const G* grads, float* momentum_buffer, std::int64_t n,
                           float lr, float momentum, float weight_decay, bool nesterov) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    // sgd_update leaves the buffer untouched when momentum == 0; then there may be none.
    float unused = 0.0f;
    float& buffer = momentum_buffer != nullptr ? momentum_buffer[i] : unused;
    math::sgd_update(params[i], static_cast<float>(grads[i]), buffer, lr, momentum, weight_decay,
                     nesterov);
  }
}

template <typename G>
__global__ void adam_kernel(float* params, const G* grads, float* m, float* v, std::int64_t n,
                            math::AdamStepScalars scalars) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    math::adam_update(params[i], static_cast<float>(grads[i]), m[i], v[i], scalars);
  }
}

}  // namespace

template <typename G>
void sgd_step(float* params, const G* grads, float* momentum_buffer, std::int64_t n, float lr,
              float momentum, float weight_decay, bool nesterov, void* stream) {
  if (n == 0) return;
  ZT_CHECK(momentum == 0.0f || momentum_buffer != nullptr,
           "sgd_step: momentum " + std::to_string(momentum) + " needs a momentum buffer");
  sgd_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      params, grads, momentum_buffer, n, lr, momentum, weight_decay, nesterov);
  check_launch("sgd_kernel", n);
}

template <typename G>
void adam_step(float* params, const G* grads, float* m, float* v, std::int64_t n,
               const math::AdamStepScalars& scalars, void* stream) {
  if (n == 0) return;
  adam_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      params, grads, m, v, n, scalars);
  check_launch("adam_kernel", n);
}

#define ZT_INSTANTIATE(G)                                                                      \
  template void sgd_step<G>(float*, const G*, float*, std::int64_t, float, float, float, bool, \
                            void*);                                                            \
  template void adam_step<G>(float*, const G*, float*, float*, std::int64_t,                   \
                             const math::AdamStepScalars&, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
ZT_INSTANTIATE(F16)
#undef ZT_INSTANTIATE

}  // namespace zt::optim::cuda
