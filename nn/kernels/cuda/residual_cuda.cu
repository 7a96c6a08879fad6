// CUDA residual add and in-place add: grid-stride loops over the shared per-element add,
// loading f32 or bf16 and computing in fp32.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/residual_cuda.h"
#include "nn/kernels/math/bias_residual_math.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

template <typename T>
__global__ void residual_add_kernel(const T* x, const T* branch, T* y, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    y[i] = T(math::residual_add(static_cast<float>(x[i]), static_cast<float>(branch[i])));
  }
}

template <typename T>
__global__ void add_into_kernel(T* dst, const T* src, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    dst[i] = T(math::residual_add(static_cast<float>(dst[i]), static_cast<float>(src[i])));
  }
}

}  // namespace

template <typename T>
void residual_add(const T* x, const T* branch, T* y, std::int64_t n, void* stream) {
  if (n == 0) return;
  const int blocks = detail::blocks_for(n, detail::kThreadsPerBlock);
  residual_add_kernel<<<blocks, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(x, branch,
                                                                                          y, n);
  detail::check_launch("residual_add_kernel", std::to_string(n) + " elements");
}

template <typename T>
void add_into(T* dst, const T* src, std::int64_t n, void* stream) {
  if (n == 0) return;
  const int blocks = detail::blocks_for(n, detail::kThreadsPerBlock);
  add_into_kernel<<<blocks, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(dst, src, n);
  detail::check_launch("add_into_kernel", std::to_string(n) + " elements");
}

#define ZT_INSTANTIATE(T)                                                     \
  template void residual_add<T>(const T*, const T*, T*, std::int64_t, void*); \
  template void add_into<T>(T*, const T*, std::int64_t, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
