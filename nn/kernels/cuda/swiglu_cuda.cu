// CUDA SwiGLU: one thread per (row, hidden column), reading the gate and up values of that
// column and writing h (forward) or both gradients (backward) in fp32, rounded once. A
// thread reads its pair before writing it, so the backward may write over gate_up.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/swiglu_cuda.h"
#include "nn/kernels/math/swiglu_math.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

template <typename T>
__global__ void swiglu_forward_kernel(const T* gate_up, std::int64_t n, std::int64_t hidden, T* h) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t gate = (i / hidden) * 2 * hidden + i % hidden;
    h[i] = T(math::swiglu_forward(static_cast<float>(gate_up[gate]),
                                  static_cast<float>(gate_up[gate + hidden])));
  }
}

template <typename T>
__global__ void swiglu_backward_kernel(const T* gate_up, const T* dh, std::int64_t n,
                                       std::int64_t hidden, T* d_gate_up) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t gate = (i / hidden) * 2 * hidden + i % hidden;
    float d_gate = 0.0f;
    float d_up = 0.0f;
    math::swiglu_backward(static_cast<float>(gate_up[gate]),
                          static_cast<float>(gate_up[gate + hidden]), static_cast<float>(dh[i]),
                          &d_gate, &d_up);
    d_gate_up[gate] = T(d_gate);
    d_gate_up[gate + hidden] = T(d_up);
  }
}

std::string shape_of(std::int64_t rows, std::int64_t hidden) {
  return "(" + std::to_string(rows) + ", 2 x " + std::to_string(hidden) + ")";
}

}  // namespace

template <typename T>
void swiglu_forward(const T* gate_up, std::int64_t rows, std::int64_t hidden, T* h, void* stream) {
  const std::int64_t n = rows * hidden;
  if (n == 0) return;
  swiglu_forward_kernel<<<detail::blocks_for(n, detail::kThreadsPerBlock), detail::kThreadsPerBlock,
                          0, detail::as_stream(stream)>>>(gate_up, n, hidden, h);
  detail::check_launch("swiglu_forward_kernel", shape_of(rows, hidden));
}

template <typename T>
void swiglu_backward(const T* gate_up, const T* dh, std::int64_t rows, std::int64_t hidden,
                     T* d_gate_up, void* stream) {
  const std::int64_t n = rows * hidden;
  if (n == 0) return;
  swiglu_backward_kernel<<<detail::blocks_for(n, detail::kThreadsPerBlock),
                           detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      gate_up, dh, n, hidden, d_gate_up);
  detail::check_launch("swiglu_backward_kernel", shape_of(rows, hidden));
}

#define ZT_INSTANTIATE(T)                                                           \
  template void swiglu_forward<T>(const T*, std::int64_t, std::int64_t, T*, void*); \
  template void swiglu_backward<T>(const T*, const T*, std::int64_t, std::int64_t, T*, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
