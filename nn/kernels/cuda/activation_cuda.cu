// CUDA ReLU and GELU forward/backward: grid-stride loops over the shared per-element math,
// loading f32 or bf16 and computing in fp32.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/activation_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/math/activation_math.h"
#include "nn/kernels/math/gelu_math.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

// Functors rather than lambdas: device lambdas would need --extended-lambda.
struct ReluForward {
  __device__ float operator()(float x) const { return math::relu_forward(x); }
};
struct ReluBackward {
  __device__ float operator()(float x, float dy) const { return math::relu_backward(x, dy); }
};
struct GeluForward {
  __device__ float operator()(float x) const { return math::gelu_forward(x); }
};
struct GeluBackward {
  __device__ float operator()(float x, float dy) const { return math::gelu_backward(x, dy); }
};

template <typename T, typename Op>
__global__ void forward_kernel(const T* x, T* y, std::int64_t n, Op op) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    y[i] = T(op(static_cast<float>(x[i])));
  }
}

template <typename T, typename Op>
__global__ void backward_kernel(const T* x, const T* dy, T* dx, std::int64_t n, Op op) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    dx[i] = T(op(static_cast<float>(x[i]), static_cast<float>(dy[i])));
  }
}

template <typename T, typename Op>
void launch_forward(const char* name, const T* x, T* y, std::int64_t n, void* stream) {
  if (n == 0) return;
  forward_kernel<<<detail::blocks_for(n, detail::kThreadsPerBlock), detail::kThreadsPerBlock, 0,
                   detail::as_stream(stream)>>>(x, y, n, Op{});
  detail::check_launch(name, std::to_string(n) + " elements");
}

template <typename T, typename Op>
void launch_backward(const char* name, const T* x, const T* dy, T* dx, std::int64_t n,
                     void* stream) {
  if (n == 0) return;
  backward_kernel<<<detail::blocks_for(n, detail::kThreadsPerBlock), detail::kThreadsPerBlock, 0,
                    detail::as_stream(stream)>>>(x, dy, dx, n, Op{});
  detail::check_launch(name, std::to_string(n) + " elements");
}

}  // namespace

template <typename T>
void relu_forward(const T* x, T* y, std::int64_t n, void* stream) {
  launch_forward<T, ReluForward>("relu_forward_kernel", x, y, n, stream);
}
template <typename T>
void relu_backward(const T* x, const T* dy, T* dx, std::int64_t n, void* stream) {
  launch_backward<T, ReluBackward>("relu_backward_kernel", x, dy, dx, n, stream);
}
template <typename T>
void gelu_forward(const T* x, T* y, std::int64_t n, void* stream) {
  launch_forward<T, GeluForward>("gelu_forward_kernel", x, y, n, stream);
}
template <typename T>
void gelu_backward(const T* x, const T* dy, T* dx, std::int64_t n, void* stream) {
  launch_backward<T, GeluBackward>("gelu_backward_kernel", x, dy, dx, n, stream);
}

#define ZT_INSTANTIATE(T)                                                      \
  template void relu_forward<T>(const T*, T*, std::int64_t, void*);            \
  template void relu_backward<T>(const T*, const T*, T*, std::int64_t, void*); \
  template void gelu_forward<T>(const T*, T*, std::int64_t, void*);            \
  template void gelu_backward<T>(const T*, const T*, T*, std::int64_t, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
