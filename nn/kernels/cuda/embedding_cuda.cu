// CUDA embedding: one thread per (token, channel) element; forward gathers through the
// shared math, backward scatter-adds into fp32 gradients with atomicAdd.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/embedding_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/math/embedding_math.h"

namespace zt::nn::cuda {
namespace {

__device__ __forceinline__ std::int64_t checked_id(const std::int32_t* ids, std::int64_t token,
                                                   std::int64_t vocab) {
  const std::int32_t id = ids[token];
  if (id < 0 || id >= vocab) __trap();  // a bad token id is a caller bug: fail loudly
  return id;
}

template <typename T>
__global__ void embedding_forward_kernel(const std::int32_t* ids, const T* wte, const T* wpe,
                                         std::int64_t tokens, std::int64_t seq_len,
                                         std::int64_t channels, std::int64_t vocab, T* out) {
  const std::int64_t n = tokens * channels;
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    const std::int64_t token = i / channels;
    const std::int64_t c = i % channels;
    const std::int64_t id = checked_id(ids, token, vocab);
    const std::int64_t position = token % seq_len;
    const float token_value = static_cast<float>(wte[id * channels + c]);
    out[i] = wpe != nullptr ? T(math::embedding_forward_element(
                                  token_value, static_cast<float>(wpe[position * channels + c])))
                            : T(token_value);
  }
}

template <typename T>
__global__ void embedding_backward_kernel(const std::int32_t* ids, const T* dout,
                                          std::int64_t tokens, std::int64_t seq_len,
                                          std::int64_t channels, std::int64_t vocab, float* dwte,
                                          float* dwpe) {
  const std::int64_t n = tokens * channels;
  for (std::int64_t i = detail::global_thread(); i < n; i += detail::grid_threads()) {
    const std::int64_t token = i / channels;
    const std::int64_t c = i % channels;
    const std::int64_t id = checked_id(ids, token, vocab);
    const std::int64_t position = token % seq_len;
    const float d = static_cast<float>(dout[i]);
    // The += of embedding_backward_row, made atomic: tokens repeat within a batch.
    atomicAdd(&dwte[id * channels + c], d);
    if (dwpe != nullptr) atomicAdd(&dwpe[position * channels + c], d);
  }
}

std::string shape_of(std::int64_t tokens, std::int64_t channels) {
  return "(" + std::to_string(tokens) + ", " + std::to_string(channels) + ")";
}

}  // namespace

template <typename T>
void embedding_forward(const std::int32_t* ids, const T* wte, const T* wpe, std::int64_t tokens,
                       std::int64_t seq_len, std::int64_t channels, std::int64_t vocab, T* out,
                       void* stream) {
  if (tokens == 0 || channels == 0) return;
  embedding_forward_kernel<<<detail::blocks_for(tokens * channels, detail::kThreadsPerBlock),
                             detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      ids, wte, wpe, tokens, seq_len, channels, vocab, out);
  detail::check_launch("embedding_forward_kernel", shape_of(tokens, channels));
}

template <typename T>
void embedding_backward(const std::int32_t* ids, const T* dout, std::int64_t tokens,
                        std::int64_t seq_len, std::int64_t channels, std::int64_t vocab,
                        float* dwte, float* dwpe, void* stream) {
  if (tokens == 0 || channels == 0) return;
  embedding_backward_kernel<<<detail::blocks_for(tokens * channels, detail::kThreadsPerBlock),
                              detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(
      ids, dout, tokens, seq_len, channels, vocab, dwte, dwpe);
  detail::check_launch("embedding_backward_kernel", shape_of(tokens, channels));
}

#define ZT_INSTANTIATE(T)                                                                        \
  template void embedding_forward<T>(const std::int32_t*, const T*, const T*, std::int64_t,      \
                                     std::int64_t, std::int64_t, std::int64_t, T*, void*);       \
  template void embedding_backward<T>(const std::int32_t*, const T*, std::int64_t, std::int64_t, \
                                      std::int64_t, std::int64_t, float*, float*, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
