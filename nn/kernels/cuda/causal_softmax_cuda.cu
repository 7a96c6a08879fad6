// CUDA causal softmax: one warp per row; the row max, Σ exp and Σ p·dp are warp reductions
// in fp32, the per-element arithmetic and the mask come from the shared math.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/causal_softmax_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/reduce_internal.h"
#include "nn/kernels/math/attention_math.h"

namespace zt::nn::cuda {
namespace {

using detail::kWarpSize;

template <typename T>
__global__ void causal_softmax_forward_kernel(T* scores, std::int64_t rows, std::int64_t seq_len) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const std::int64_t warps = detail::grid_threads() / kWarpSize;
  for (std::int64_t r = detail::global_thread() / kWarpSize; r < rows; r += warps) {
    T* row = scores + r * seq_len;
    const std::int64_t t = r % seq_len;
    float max_s = -INFINITY;
    for (std::int64_t j = lane; math::causal_visible(j, t); j += kWarpSize) {
      max_s = fmaxf(max_s, static_cast<float>(row[j]));
    }
    max_s = detail::warp_max(max_s);
    float sum = 0.0f;
    for (std::int64_t j = lane; math::causal_visible(j, t); j += kWarpSize) {
      sum += math::causal_softmax_exp(static_cast<float>(row[j]), max_s);
    }
    const float inv_sum = 1.0f / detail::warp_sum(sum);
    // The masked tail is written as exact zeros, as on the CPU (see attention_math.h).
    for (std::int64_t j = lane; j < seq_len; j += kWarpSize) {
      row[j] = T(math::causal_visible(j, t)
                     ? math::causal_softmax_exp(static_cast<float>(row[j]), max_s) * inv_sum
                     : 0.0f);
    }
  }
}

template <typename T>
__global__ void causal_softmax_backward_kernel(const T* p, T* dp, std::int64_t rows,
                                               std::int64_t seq_len) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const std::int64_t warps = detail::grid_threads() / kWarpSize;
  for (std::int64_t r = detail::global_thread() / kWarpSize; r < rows; r += warps) {
    const T* p_row = p + r * seq_len;
    T* dp_row = dp + r * seq_len;
    const std::int64_t t = r % seq_len;
    float dot = 0.0f;
    for (std::int64_t j = lane; math::causal_visible(j, t); j += kWarpSize) {
      dot += static_cast<float>(p_row[j]) * static_cast<float>(dp_row[j]);
    }
    dot = detail::warp_sum(dot);
    for (std::int64_t j = lane; j < seq_len; j += kWarpSize) {
      dp_row[j] = T(math::causal_visible(j, t)
                        ? math::causal_softmax_backward_element(static_cast<float>(p_row[j]),
                                                                static_cast<float>(dp_row[j]), dot)
                        : 0.0f);
    }
  }
}

std::string shape_of(std::int64_t rows, std::int64_t seq_len) {
  return "(" + std::to_string(rows) + ", " + std::to_string(seq_len) + ")";
}

}  // namespace

template <typename T>
void causal_softmax_forward(T* scores, std::int64_t rows, std::int64_t seq_len, void* stream) {
  if (rows == 0 || seq_len == 0) return;
  causal_softmax_forward_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock),
                                  detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      scores, rows, seq_len);
  detail::check_launch("causal_softmax_forward_kernel", shape_of(rows, seq_len));
}

template <typename T>
void causal_softmax_backward(const T* p, T* dp, std::int64_t rows, std::int64_t seq_len,
                             void* stream) {
  if (rows == 0 || seq_len == 0) return;
  causal_softmax_backward_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock),
                                   detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      p, dp, rows, seq_len);
  detail::check_launch("causal_softmax_backward_kernel", shape_of(rows, seq_len));
}

template void causal_softmax_forward<float>(float*, std::int64_t, std::int64_t, void*);
template void causal_softmax_forward<BF16>(BF16*, std::int64_t, std::int64_t, void*);
template void causal_softmax_backward<float>(const float*, float*, std::int64_t, std::int64_t,
                                             void*);
template void causal_softmax_backward<BF16>(const BF16*, BF16*, std::int64_t, std::int64_t, void*);

}  // namespace zt::nn::cuda
