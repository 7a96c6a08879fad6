// CUDA Linear bias: forward is a grid-stride loop over the shared per-element add; backward
// gives each block a tile of 32 columns, sums the rows of each column in a fixed order
// (8 strided row groups, then the 8 partials in order) and adds the total to dbias once.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/bias_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/math/bias_residual_math.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

// Backward tile: one warp's worth of adjacent columns (coalesced row reads), and the block's
// remaining threads as row groups. The summation order depends only on these constants.
constexpr int kTileCols = detail::kWarpSize;
constexpr int kRowGroups = detail::kThreadsPerBlock / kTileCols;
static_assert(kTileCols * kRowGroups == detail::kThreadsPerBlock);

template <typename T>
__global__ void bias_add_forward_kernel(T* y, const T* bias, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    y[i] = T(math::bias_add(static_cast<float>(y[i]), static_cast<float>(bias[i % cols])));
  }
}

// Thread (group, lane) sums rows group, group + kRowGroups, ... of column tile * 32 + lane;
// group 0 then adds the kRowGroups partials in group order. No atomics, no dependence on the
// grid size or on scheduling.
template <typename T>
__global__ void bias_backward_kernel(const T* dy, float* dbias, std::int64_t rows,
                                     std::int64_t cols) {
  __shared__ float partial[kRowGroups][kTileCols];
  const int lane = static_cast<int>(threadIdx.x) % kTileCols;
  const int group = static_cast<int>(threadIdx.x) / kTileCols;
  const std::int64_t tiles = (cols + kTileCols - 1) / kTileCols;
  // The loop bounds depend on blockIdx only, so every thread of a block reaches the barriers.
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t c = tile * kTileCols + lane;
    float sum = 0.0f;
    if (c < cols) {
      for (std::int64_t r = group; r < rows; r += kRowGroups) {
        sum += static_cast<float>(dy[r * cols + c]);
      }
    }
    partial[group][lane] = sum;
    __syncthreads();
    if (group == 0 && c < cols) {
      float total = 0.0f;
      for (int g = 0; g < kRowGroups; ++g) total += partial[g][lane];
      dbias[c] += total;
    }
    __syncthreads();  // before the next tile overwrites `partial`
  }
}

std::string shape_of(std::int64_t rows, std::int64_t cols) {
  return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}

}  // namespace

template <typename T>
void bias_add_forward(T* y, const T* bias, std::int64_t rows, std::int64_t cols, void* stream) {
  if (rows == 0 || cols == 0) return;
  const int blocks = detail::blocks_for(rows * cols, detail::kThreadsPerBlock);
  bias_add_forward_kernel<<<blocks, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      y, bias, rows, cols);
  detail::check_launch("bias_add_forward_kernel", shape_of(rows, cols));
}

template <typename T>
void bias_backward(const T* dy, float* dbias, std::int64_t rows, std::int64_t cols, void* stream) {
  if (rows == 0 || cols == 0) return;
  const int blocks = detail::blocks_for(cols, kTileCols);
  bias_backward_kernel<<<blocks, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      dy, dbias, rows, cols);
  detail::check_launch("bias_backward_kernel", shape_of(rows, cols));
}

#define ZT_INSTANTIATE(T)                                                             \
  template void bias_add_forward<T>(T*, const T*, std::int64_t, std::int64_t, void*); \
  template void bias_backward<T>(const T*, float*, std::int64_t, std::int64_t, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
