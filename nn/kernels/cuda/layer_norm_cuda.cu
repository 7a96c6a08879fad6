// CUDA layer norm: one warp per row, the row sums as warp reductions in fp32, the per-element
// arithmetic from the shared math. Backward gathers dweight/dbias per block in shared memory
// and adds them to the fp32 gradients with one atomicAdd per channel per block.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/layer_norm_cuda.h"
#include "nn/kernels/cuda/reduce_internal.h"
#include "nn/kernels/math/layer_norm_math.h"

namespace zt::nn::cuda {
namespace {

using detail::kWarpSize;
using detail::lane_id;
using detail::warp_count;
using detail::warp_id;

// Two fp32 arrays of C in the default 48 KiB of dynamic shared memory; wider rows add to
// the global gradients directly (correct, just more atomics).
constexpr std::int64_t kMaxSharedChannels = 6144;
// Enough resident blocks to fill an H100/H200 (132 SMs x 8 blocks of 256 threads); more
// blocks would only add shared-memory flushes in backward.
constexpr int kMaxBackwardBlocks = 1056;

template <typename T>
__global__ void layer_norm_forward_kernel(const T* x, const T* weight, const T* bias,
                                          std::int64_t rows, std::int64_t channels, float eps, T* y,
                                          float* mean_out, float* rstd_out) {
  const int lane = lane_id();
  for (std::int64_t row = warp_id(); row < rows; row += warp_count()) {
    const T* x_row = x + row * channels;
    T* y_row = y + row * channels;
    float sum = 0.0f;
    for (std::int64_t c = lane; c < channels; c += kWarpSize) sum += static_cast<float>(x_row[c]);
    const float mean = math::layer_norm_mean(detail::warp_sum(sum), channels);
    // Two passes, as the CPU row: Σ (x - mean)^2 keeps precision where Σ x^2 - mean^2 cancels.
    float sq_dev_sum = 0.0f;
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float d = static_cast<float>(x_row[c]) - mean;
      sq_dev_sum += d * d;
    }
    const float rstd = math::layer_norm_rstd(detail::warp_sum(sq_dev_sum), channels, eps);
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      y_row[c] =
          T(math::layer_norm_output(static_cast<float>(x_row[c]), mean, rstd,
                                    static_cast<float>(weight[c]), static_cast<float>(bias[c])));
    }
    if (lane == 0) {
      mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
  }
}

template <typename T>
__global__ void layer_norm_backward_kernel(const T* dy, const T* x, const T* weight,
                                           const float* mean, const float* rstd, std::int64_t rows,
                                           std::int64_t channels, T* dx, float* dweight,
                                           float* dbias, bool use_shared) {
  extern __shared__ float partial[];  // dweight (C), dbias (C) of this block's rows
  float* acc_weight = use_shared ? partial : dweight;
  float* acc_bias = use_shared ? partial + channels : dbias;
  if (use_shared) {
    for (std::int64_t c = threadIdx.x; c < 2 * channels; c += blockDim.x) partial[c] = 0.0f;
    __syncthreads();
  }
  const int lane = lane_id();
  for (std::int64_t row = warp_id(); row < rows; row += warp_count()) {
    const T* dy_row = dy + row * channels;
    const T* x_row = x + row * channels;
    T* dx_row = dx + row * channels;
    const float row_mean = mean[row];
    const float row_rstd = rstd[row];
    float g_sum = 0.0f;
    float gn_sum = 0.0f;
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float n = math::layer_norm_normalize(static_cast<float>(x_row[c]), row_mean, row_rstd);
      const float g =
          math::layer_norm_g(static_cast<float>(dy_row[c]), static_cast<float>(weight[c]));
      g_sum += g;
      gn_sum += g * n;
    }
    const float g_mean = math::layer_norm_mean(detail::warp_sum(g_sum), channels);
    const float gn_mean = math::layer_norm_mean(detail::warp_sum(gn_sum), channels);
    // Each lane reads dy[c] before writing dx[c] for the same c, so dx may alias dy.
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float d = static_cast<float>(dy_row[c]);
      const float n = math::layer_norm_normalize(static_cast<float>(x_row[c]), row_mean, row_rstd);
      const float g = math::layer_norm_g(d, static_cast<float>(weight[c]));
      dx_row[c] = T(math::layer_norm_dx(g, n, row_rstd, g_mean, gn_mean));
      atomicAdd(&acc_weight[c], d * n);  // dw += dy * n
      atomicAdd(&acc_bias[c], d);        // db += dy
    }
  }
  if (use_shared) {
    __syncthreads();
    for (std::int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      atomicAdd(&dweight[c], partial[c]);
      atomicAdd(&dbias[c], partial[channels + c]);
    }
  }
}

std::string shape_of(std::int64_t rows, std::int64_t channels) {
  return "(" + std::to_string(rows) + ", " + std::to_string(channels) + ")";
}

}  // namespace

template <typename T>
void layer_norm_forward(const T* x, const T* weight, const T* bias, std::int64_t rows,
                        std::int64_t channels, float eps, T* y, float* mean, float* rstd,
                        void* stream) {
  if (rows == 0 || channels == 0) return;
  layer_norm_forward_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock),
                              detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      x, weight, bias, rows, channels, eps, y, mean, rstd);
  detail::check_launch("layer_norm_forward_kernel", shape_of(rows, channels));
}

template <typename T>
void layer_norm_backward(const T* dy, const T* x, const T* weight, const float* mean,
                         const float* rstd, std::int64_t rows, std::int64_t channels, T* dx,
                         float* dweight, float* dbias, void* stream) {
  if (rows == 0 || channels == 0) return;
  const bool use_shared = channels <= kMaxSharedChannels;
  const std::size_t shared_bytes = use_shared ? 2 * sizeof(float) * channels : 0;
  const int row_blocks = detail::blocks_for(rows, detail::kWarpsPerBlock);
  const int blocks = row_blocks < kMaxBackwardBlocks ? row_blocks : kMaxBackwardBlocks;
  layer_norm_backward_kernel<<<blocks, detail::kThreadsPerBlock, shared_bytes,
                               detail::as_stream(stream)>>>(
      dy, x, weight, mean, rstd, rows, channels, dx, dweight, dbias, use_shared);
  detail::check_launch("layer_norm_backward_kernel", shape_of(rows, channels));
}

#define ZT_INSTANTIATE(T)                                                                        \
  template void layer_norm_forward<T>(const T*, const T*, const T*, std::int64_t, std::int64_t,  \
                                      float, T*, float*, float*, void*);                         \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const float*, const float*, \
                                       std::int64_t, std::int64_t, T*, float*, float*, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
