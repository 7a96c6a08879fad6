// CUDA next-token selection: one block per row. Every pass over the row is a count, an integer
// sum or an argmax in the total order of Note [Selecting a token in integers], so the block's
// reductions, in whatever order they add, give the CPU loop's result; the per-element
// arithmetic is the shared math's.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/token_select_cuda.h"

namespace zt::nn::cuda {
namespace {

using detail::kThreadsPerBlock;

// The block's shared scratch: one slot per thread for the reductions and scans.
struct Scratch {
  std::uint64_t sums[kThreadsPerBlock];
  std::uint32_t keys[kThreadsPerBlock];
  std::int64_t ids[kThreadsPerBlock];
  std::uint64_t total;
};

// Σ value over the block, every thread gets it. The leading barrier lets consecutive calls
// share the scratch.
__device__ std::uint64_t block_sum(std::uint64_t value, Scratch& s) {
  __syncthreads();
  s.sums[threadIdx.x] = value;
  __syncthreads();
  for (unsigned width = kThreadsPerBlock / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) s.sums[threadIdx.x] += s.sums[threadIdx.x + width];
    __syncthreads();
  }
  return s.sums[0];
}

// The sum of the values of the threads before this one (an exclusive scan), and the block's
// total in *total. Thread 0 adds the kThreadsPerBlock partials in thread order.
__device__ std::uint64_t block_exclusive_scan(std::uint64_t value, Scratch& s,
                                              std::uint64_t* total) {
  __syncthreads();
  s.sums[threadIdx.x] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint64_t running = 0;
    for (int t = 0; t < kThreadsPerBlock; ++t) {
      const std::uint64_t own = s.sums[t];
      s.sums[t] = running;
      running += own;
    }
    s.total = running;
  }
  __syncthreads();
  *total = s.total;
  return s.sums[threadIdx.x];
}

// The greedy id: the first of the largest keys, reduced in the total order.
template <typename T>
__device__ std::int64_t block_greedy(const T* z, std::int64_t classes, Scratch& s) {
  std::int64_t best = classes;  // none yet
  std::uint32_t best_key = 0;
  for (std::int64_t c = threadIdx.x; c < classes; c += kThreadsPerBlock) {
    const std::uint32_t key = math::order_key(static_cast<float>(z[c]));
    if (best == classes || math::ranks_before(key, c, best_key, best)) {
      best = c;
      best_key = key;
    }
  }
  __syncthreads();
  s.keys[threadIdx.x] = best_key;
  s.ids[threadIdx.x] = best;
  __syncthreads();
  for (unsigned width = kThreadsPerBlock / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const std::int64_t other = s.ids[threadIdx.x + width];
      if (other != classes && (s.ids[threadIdx.x] == classes ||
                               math::ranks_before(s.keys[threadIdx.x + width], other,
                                                  s.keys[threadIdx.x], s.ids[threadIdx.x]))) {
        s.keys[threadIdx.x] = s.keys[threadIdx.x + width];
        s.ids[threadIdx.x] = other;
      }
    }
    __syncthreads();
  }
  return s.ids[0];
}

// The candidates under top_k, as math::top_k_of finds them, each count a block sum.
template <typename T>
__device__ math::TopK block_top_k(const T* z, std::int64_t classes, std::int64_t top_k,
                                  Scratch& s) {
  math::TopK top;
  if (top_k <= 0 || top_k >= classes) return top;
  const auto count_at_least = [&](std::uint32_t t) {
    std::uint64_t count = 0;
    for (std::int64_t c = threadIdx.x; c < classes; c += kThreadsPerBlock) {
      count += math::order_key(static_cast<float>(z[c])) >= t;
    }
    return static_cast<std::int64_t>(block_sum(count, s));
  };
  top.all = false;
  top.key = math::top_k_key(top_k, count_at_least);
  top.equal_quota = top_k - (top.key == 0xffffffffu ? 0 : count_at_least(top.key + 1));
  return top;
}

// math::select_token_row with the row cut into one contiguous chunk per thread: the chunks'
// equal-key counts and weights are scanned in chunk order, so each thread knows what the ids
// before its chunk hold, and the thread whose chunk holds the target walks it.
template <typename T>
__global__ void select_tokens_kernel(const T* logits, std::int64_t row_stride,
                                     std::int64_t first_offset, std::int64_t classes,
                                     math::TokenSampling sampling, std::int32_t* ids) {
  __shared__ Scratch s;
  const std::int64_t row = blockIdx.x;
  const T* z = logits + first_offset + row * row_stride;
  const std::int64_t best = block_greedy(z, classes, s);
  if (sampling.temperature == 0.0f) {
    if (threadIdx.x == 0) ids[row] = static_cast<std::int32_t>(best);
    return;
  }
  const math::TopK top = block_top_k(z, classes, sampling.top_k, s);
  const float z_max = static_cast<float>(z[best]);
  const float inverse_temperature = 1.0f / sampling.temperature;
  const std::int64_t chunk = (classes + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t first = threadIdx.x * chunk < classes ? threadIdx.x * chunk : classes;
  const std::int64_t last = first + chunk < classes ? first + chunk : classes;
  std::uint64_t equal = 0;
  for (std::int64_t c = first; c < last; ++c) {
    equal += math::order_key(static_cast<float>(z[c])) == top.key;
  }
  std::uint64_t unused_total = 0;
  const auto equal_start = static_cast<std::int64_t>(block_exclusive_scan(equal, s, &unused_total));
  std::uint64_t weight = 0;
  std::int64_t equal_before = equal_start;
  for (std::int64_t c = first; c < last; ++c) {
    const float zc = static_cast<float>(z[c]);
    const std::uint32_t key = math::order_key(zc);
    if (math::is_candidate(top, key, equal_before)) {
      weight += math::candidate_weight(zc, z_max, inverse_temperature);
    }
    equal_before += key == top.key;
  }
  std::uint64_t total = 0;
  const std::uint64_t start = block_exclusive_scan(weight, s, &total);
  if (total == 0) {  // an infinite or NaN best logit: no weights to draw by
    if (threadIdx.x == 0) ids[row] = static_cast<std::int32_t>(best);
    return;
  }
  const std::uint64_t draw = math::sampling_draw(
      math::sampling_row_key(sampling.seed, static_cast<std::uint64_t>(row)), sampling.step);
  const std::uint64_t target = math::draw_target(draw, total);
  if (target < start || target - start >= weight) return;  // another chunk holds it
  std::uint64_t cumulative = start;
  equal_before = equal_start;
  for (std::int64_t c = first; c < last; ++c) {
    const float zc = static_cast<float>(z[c]);
    const std::uint32_t key = math::order_key(zc);
    if (math::is_candidate(top, key, equal_before)) {
      cumulative += math::candidate_weight(zc, z_max, inverse_temperature);
      if (cumulative > target) {
        ids[row] = static_cast<std::int32_t>(c);
        return;
      }
    }
    equal_before += key == top.key;
  }
}

}  // namespace

template <typename T>
void select_tokens(const T* logits, std::int64_t rows, std::int64_t row_stride,
                   std::int64_t first_offset, std::int64_t classes,
                   const math::TokenSampling& sampling, std::int32_t* ids, void* stream) {
  if (rows == 0) return;
  select_tokens_kernel<<<static_cast<unsigned>(rows), kThreadsPerBlock, 0,
                         detail::as_stream(stream)>>>(logits, row_stride, first_offset, classes,
                                                      sampling, ids);
  detail::check_launch("select_tokens_kernel",
                       "(" + std::to_string(rows) + ", " + std::to_string(classes) + ")");
}

template void select_tokens<float>(const float*, std::int64_t, std::int64_t, std::int64_t,
                                   std::int64_t, const math::TokenSampling&, std::int32_t*, void*);
template void select_tokens<BF16>(const BF16*, std::int64_t, std::int64_t, std::int64_t,
                                  std::int64_t, const math::TokenSampling&, std::int32_t*, void*);

}  // namespace zt::nn::cuda
