// CUDA rotary embedding: one thread per (batch row, position, pair), which computes the
// pair's cos and sin once and turns that pair in every head of the position; consecutive
// threads take consecutive pairs of a head, so both halves of a head are read coalesced.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/rope_cuda.h"
#include "nn/kernels/math/rope_math.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

template <typename T>
__global__ void rope_rotate_kernel(T* base, math::HeadStrides strides, std::int64_t seq_len,
                                   std::int64_t n_heads, std::int64_t head_dim,
                                   std::int64_t start_position, float theta, bool inverse,
                                   std::int64_t n) {
  const std::int64_t half = head_dim / 2;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t pair = i % half;
    const std::int64_t t = (i / half) % seq_len;
    const std::int64_t b = i / (half * seq_len);
    const float angle = math::rope_angle(start_position + t, pair, head_dim, theta);
    const float cos_angle = cosf(angle);
    const float sin_angle = inverse ? -sinf(angle) : sinf(angle);
    for (std::int64_t h = 0; h < n_heads; ++h) {
      T* row = base + math::head_row_start(strides, b, t, h);
      float y0 = 0.0f;
      float y1 = 0.0f;
      math::rope_rotate_pair(static_cast<float>(row[pair]), static_cast<float>(row[pair + half]),
                             cos_angle, sin_angle, &y0, &y1);
      row[pair] = T(y0);
      row[pair + half] = T(y1);
    }
  }
}

}  // namespace

template <typename T>
void rope_rotate(T* base, const math::HeadStrides& strides, std::int64_t batch,
                 std::int64_t seq_len, std::int64_t n_heads, std::int64_t head_dim,
                 std::int64_t start_position, float theta, bool inverse, void* stream) {
  const std::int64_t n = batch * seq_len * (head_dim / 2);
  if (n == 0 || n_heads == 0) return;
  rope_rotate_kernel<<<detail::blocks_for(n, detail::kThreadsPerBlock), detail::kThreadsPerBlock, 0,
                       detail::as_stream(stream)>>>(base, strides, seq_len, n_heads, head_dim,
                                                    start_position, theta, inverse, n);
  detail::check_launch("rope_rotate_kernel",
                       "(" + std::to_string(batch) + ", " + std::to_string(seq_len) + ", " +
                           std::to_string(n_heads) + ", " + std::to_string(head_dim) + ")");
}

#define ZT_INSTANTIATE(T)                                                                \
  template void rope_rotate<T>(T*, const math::HeadStrides&, std::int64_t, std::int64_t, \
                               std::int64_t, std::int64_t, std::int64_t, float, bool, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
