// CUDA attention rows: one warp per row for the softmax and D (each lane keeps its own
// online-softmax statistics or partial dot, merged across the warp), one thread per element
// for the probabilities and dS. The arithmetic and the mask come from the shared math.
#include <cuda_runtime.h>

#include <string>

#include "nn/kernels/cuda/attention_rows_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/reduce_internal.h"
#include "nn/kernels/math/attention_dropout_math.h"

namespace zt::nn::cuda {
namespace {

using detail::kWarpSize;

__device__ __forceinline__ math::OnlineSoftmax warp_merge(math::OnlineSoftmax state) {
  // merge(a, b) == merge(b, a) bit for bit, so every lane ends with the same statistics.
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const math::OnlineSoftmax other{__shfl_xor_sync(0xFFFFFFFFu, state.max, offset),
                                    __shfl_xor_sync(0xFFFFFFFFu, state.sum, offset)};
    state = math::online_softmax_merge(state, other);
  }
  return state;
}

__global__ void softmax_forward_kernel(float* scores, float* lse, std::int64_t rows,
                                       std::int64_t query_len, std::int64_t kv_len) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const std::int64_t warps = detail::grid_threads() / kWarpSize;
  for (std::int64_t r = detail::global_thread() / kWarpSize; r < rows; r += warps) {
    float* row = scores + r * kv_len;
    const std::int64_t t = kv_len - query_len + r % query_len;  // the query's key position
    math::OnlineSoftmax state = math::online_softmax_empty();
    for (std::int64_t j = lane; math::causal_visible(j, t); j += kWarpSize) {
      math::online_softmax_update(state, row[j]);
    }
    const float row_lse = math::online_softmax_lse(warp_merge(state));
    for (std::int64_t j = lane; j < kv_len; j += kWarpSize) {
      row[j] = math::attention_probability(row[j], row_lse, j, t);
    }
    if (lane == 0) lse[r] = row_lse;
  }
}

__global__ void probabilities_kernel(float* scores, const float* lse, std::int64_t rows,
                                     std::int64_t seq_len) {
  const std::int64_t n = rows * seq_len;
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    const std::int64_t r = i / seq_len;
    scores[i] = math::attention_probability(scores[i], lse[r], i % seq_len, r % seq_len);
  }
}

__global__ void output_dot_kernel(const float* o, math::HeadStrides o_strides, const float* d_o,
                                  math::HeadStrides d_o_strides, std::int64_t n_head,
                                  std::int64_t seq_len, std::int64_t head_dim, std::int64_t rows,
                                  float* d) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const std::int64_t warps = detail::grid_threads() / kWarpSize;
  for (std::int64_t r = detail::global_thread() / kWarpSize; r < rows; r += warps) {
    // r = (b n_head + h) T + t, the layout of lse and d
    const std::int64_t t = r % seq_len, h = (r / seq_len) % n_head, b = r / (seq_len * n_head);
    const float* o_row = o + math::head_row_start(o_strides, b, t, h);
    const float* d_o_row = d_o + math::head_row_start(d_o_strides, b, t, h);
    float dot = 0.0f;
    for (std::int64_t k = lane; k < head_dim; k += kWarpSize) dot += o_row[k] * d_o_row[k];
    dot = detail::warp_sum(dot);
    if (lane == 0) d[r] = dot;
  }
}

__global__ void score_gradient_kernel(const float* p, float* dp, const float* d, std::int64_t rows,
                                      std::int64_t seq_len) {
  const std::int64_t n = rows * seq_len;
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    dp[i] = math::attention_score_gradient(p[i], dp[i], d[i / seq_len]);
  }
}

// The mask of element i of training's (B n_head T, T) probabilities: row r = (b n_head + h) T
// + q, column = key.
struct DropoutElement {
  math::AttentionDropoutHead head;
  std::int64_t query;
  std::int64_t key;
};
__device__ __forceinline__ DropoutElement dropout_element(const math::DropoutMask& mask,
                                                          std::int64_t i, std::int64_t n_head,
                                                          std::int64_t seq_len) {
  const std::int64_t r = i / seq_len;
  const std::int64_t h = (r / seq_len) % n_head, b = r / (seq_len * n_head);
  return {math::attention_dropout_head(mask, b, h, seq_len), r % seq_len, i % seq_len};
}

__global__ void dropout_forward_kernel(float* p, math::DropoutMask mask, std::int64_t n,
                                       std::int64_t n_head, std::int64_t seq_len) {
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    const DropoutElement e = dropout_element(mask, i, n_head, seq_len);
    p[i] = math::dropout_apply(p[i], e.head.keep(e.query, e.key), mask.scale);
  }
}

__global__ void dropout_score_gradient_kernel(float* p, float* dp, const float* d,
                                              math::DropoutMask mask, std::int64_t n,
                                              std::int64_t n_head, std::int64_t seq_len) {
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    const DropoutElement e = dropout_element(mask, i, n_head, seq_len);
    dp[i] = math::attention_dropout_score_gradient(p[i], dp[i], d[i / seq_len],
                                                   e.head.keep(e.query, e.key), mask.scale);
  }
}

std::string shape_of(std::int64_t rows, std::int64_t columns) {
  return "(" + std::to_string(rows) + ", " + std::to_string(columns) + ")";
}

}  // namespace

void attention_softmax_forward(float* scores, float* lse, std::int64_t rows, std::int64_t query_len,
                               std::int64_t kv_len, void* stream) {
  if (rows == 0 || query_len == 0) return;
  softmax_forward_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock),
                           detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      scores, lse, rows, query_len, kv_len);
  detail::check_launch("attention softmax_forward_kernel", shape_of(rows, kv_len));
}

void attention_probabilities(float* scores, const float* lse, std::int64_t rows,
                             std::int64_t seq_len, void* stream) {
  if (rows == 0 || seq_len == 0) return;
  probabilities_kernel<<<detail::blocks_for(rows * seq_len, detail::kThreadsPerBlock),
                         detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(scores, lse,
                                                                                   rows, seq_len);
  detail::check_launch("attention probabilities_kernel", shape_of(rows, seq_len));
}

void attention_output_dot(const float* o, math::HeadStrides o_strides, const float* d_o,
                          math::HeadStrides d_o_strides, std::int64_t batch, std::int64_t n_head,
                          std::int64_t seq_len, std::int64_t head_dim, float* d, void* stream) {
  const std::int64_t rows = batch * n_head * seq_len;
  if (rows == 0) return;
  output_dot_kernel<<<detail::blocks_for(rows, detail::kWarpsPerBlock), detail::kThreadsPerBlock, 0,
                      detail::as_stream(stream)>>>(o, o_strides, d_o, d_o_strides, n_head, seq_len,
                                                   head_dim, rows, d);
  detail::check_launch("attention output_dot_kernel", shape_of(rows, head_dim));
}

void attention_score_gradient(const float* p, float* dp, const float* d, std::int64_t rows,
                              std::int64_t seq_len, void* stream) {
  if (rows == 0 || seq_len == 0) return;
  score_gradient_kernel<<<detail::blocks_for(rows * seq_len, detail::kThreadsPerBlock),
                          detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(p, dp, d, rows,
                                                                                    seq_len);
  detail::check_launch("attention score_gradient_kernel", shape_of(rows, seq_len));
}

void attention_dropout_forward(float* p, const math::DropoutMask& mask, std::int64_t batch,
                               std::int64_t n_head, std::int64_t seq_len, void* stream) {
  const std::int64_t rows = batch * n_head * seq_len;
  if (rows == 0) return;
  dropout_forward_kernel<<<detail::blocks_for(rows * seq_len, detail::kThreadsPerBlock),
                           detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      p, mask, rows * seq_len, n_head, seq_len);
  detail::check_launch("attention dropout_forward_kernel", shape_of(rows, seq_len));
}

void attention_dropout_score_gradient(float* p, float* dp, const float* d,
                                      const math::DropoutMask& mask, std::int64_t batch,
                                      std::int64_t n_head, std::int64_t seq_len, void* stream) {
  const std::int64_t rows = batch * n_head * seq_len;
  if (rows == 0) return;
  dropout_score_gradient_kernel<<<detail::blocks_for(rows * seq_len, detail::kThreadsPerBlock),
                                  detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      p, dp, d, mask, rows * seq_len, n_head, seq_len);
  detail::check_launch("attention dropout_score_gradient_kernel", shape_of(rows, seq_len));
}

}  // namespace zt::nn::cuda
