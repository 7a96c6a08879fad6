// CUDA RMSNorm: one warp per row, the row sums as warp reductions in fp32, the per-element
// arithmetic from the shared math. Backward gathers dweight per block in shared memory and
// adds it to the fp32 gradient with one atomicAdd per channel per block (as layer norm).
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/reduce_internal.h"
#include "nn/kernels/cuda/rms_norm_cuda.h"
#include "nn/kernels/math/rms_norm_math.h"

namespace zt::nn::cuda {
namespace {

using detail::kWarpSize;
using detail::lane_id;
using detail::warp_count;
using detail::warp_id;

// One fp32 array of C in the default 48 KiB of dynamic shared memory; wider rows add to the
// global gradient directly (correct, just more atomics).
constexpr std::int64_t kMaxSharedChannels = 12288;
// Enough resident blocks to fill an H100/H200 (132 SMs x 8 blocks of 256 threads).
constexpr int kMaxBackwardBlocks = 1056;

template <typename T>
__global__ void rms_norm_forward_kernel(const T* x, const T* weight, std::int64_t rows,
                                        std::int64_t channels, float eps, T* y, float* rstd_out) {
  const int lane = lane_id();
  for (std::int64_t row = warp_id(); row < rows; row += warp_count()) {
    const T* x_row = x + row * channels;
    T* y_row = y + row * channels;
    float sq_sum = 0.0f;
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float v = static_cast<float>(x_row[c]);
      sq_sum += v * v;
    }
    const float rstd = math::rms_norm_rstd(detail::warp_sum(sq_sum), channels, eps);
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      y_row[c] = T(
          math::rms_norm_output(static_cast<float>(x_row[c]), rstd, static_cast<float>(weight[c])));
    }
    if (lane == 0) rstd_out[row] = rstd;
  }
}

template <typename T>
__global__ void rms_norm_backward_kernel(const T* dy, const T* x, const T* weight,
                                         const float* rstd, std::int64_t rows,
                                         std::int64_t channels, T* dx, float* dweight,
                                         bool use_shared) {
  extern __shared__ float partial[];  // dweight (C) of this block's rows
  float* acc_weight = use_shared ? partial : dweight;
  if (use_shared) {
    for (std::int64_t c = threadIdx.x; c < channels; c += blockDim.x) partial[c] = 0.0f;
    __syncthreads();
  }
  const int lane = lane_id();
  for (std::int64_t row = warp_id(); row < rows; row += warp_count()) {
    const T* dy_row = dy + row * channels;
    const T* x_row = x + row * channels;
    T* dx_row = dx + row * channels;
    const float row_rstd = rstd[row];
    float gn_sum = 0.0f;
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float n = static_cast<float>(x_row[c]) * row_rstd;
      gn_sum += static_cast<float>(dy_row[c]) * static_cast<float>(weight[c]) * n;
    }
    const float gn_mean = detail::warp_sum(gn_sum) / static_cast<float>(channels);
    // Each lane reads dy[c] before writing dx[c] for the same c, so dx may alias dy.
    for (std::int64_t c = lane; c < channels; c += kWarpSize) {
      const float d = static_cast<float>(dy_row[c]);
      const float n = static_cast<float>(x_row[c]) * row_rstd;
      dx_row[c] = T(math::rms_norm_dx(d * static_cast<float>(weight[c]), n, row_rstd, gn_mean));
      atomicAdd(&acc_weight[c], d * n);  // dw += dy * n
    }
  }
  if (use_shared) {
    __syncthreads();
    for (std::int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      atomicAdd(&dweight[c], partial[c]);
    }
  }
}

std::string shape_of(std::int64_t rows, std::int64_t channels) {
  return "(" + std::to_string(rows) + ", " + std::to_string(channels) + ")";
}

}  // namespace

template <typename T>
void rms_norm_forward(const T* x, const T* weight, std::int64_t rows, std::int64_t channels,
                      float eps, T* y, float* rstd, void* stream) {
  if (rows == 0 || channels == 0) return;
  rms_norm_forward_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock),
                            detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      x, weight, rows, channels, eps, y, rstd);
  detail::check_launch("rms_norm_forward_kernel", shape_of(rows, channels));
}

template <typename T>
void rms_norm_backward(const T* dy, const T* x, const T* weight, const float* rstd,
                       std::int64_t rows, std::int64_t channels, T* dx, float* dweight,
                       void* stream) {
  if (rows == 0 || channels == 0) return;
  const bool use_shared = channels <= kMaxSharedChannels;
  const std::size_t shared_bytes = use_shared ? sizeof(float) * channels : 0;
  const int row_blocks = detail::blocks_for(rows, detail::kWarpsPerBlock);
  const int blocks = row_blocks < kMaxBackwardBlocks ? row_blocks : kMaxBackwardBlocks;
  rms_norm_backward_kernel<<<blocks, detail::kThreadsPerBlock, shared_bytes,
                             detail::as_stream(stream)>>>(dy, x, weight, rstd, rows, channels, dx,
                                                          dweight, use_shared);
  detail::check_launch("rms_norm_backward_kernel", shape_of(rows, channels));
}

#define ZT_INSTANTIATE(T)                                                                      \
  template void rms_norm_forward<T>(const T*, const T*, std::int64_t, std::int64_t, float, T*, \
                                    float*, void*);                                            \
  template void rms_norm_backward<T>(const T*, const T*, const T*, const float*, std::int64_t, \
                                     std::int64_t, T*, float*, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
