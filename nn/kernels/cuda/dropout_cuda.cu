// CUDA inverted dropout: a grid-stride loop, each thread hashing its own elements' coordinates
// (Note [Dropout masks from a hash] in nn/kernels/math/dropout_math.h).
#include <cuda_runtime.h>

#include <string>

#include "nn/kernels/cuda/dropout_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"

namespace zt::nn::cuda {
namespace {

using detail::global_thread;
using detail::grid_threads;

template <typename T>
__global__ void dropout_kernel(math::DropoutMask mask, const T* x, T* y, std::int64_t n,
                               std::int64_t row_elements) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::uint64_t row = math::dropout_row(mask.stream, mask.first_sample + i / row_elements);
    const bool keep = math::dropout_keep(row, i % row_elements, mask.threshold);
    y[i] = T(math::dropout_apply(static_cast<float>(x[i]), keep, mask.scale));
  }
}

}  // namespace

template <typename T>
void dropout_rows(const math::DropoutMask& mask, const T* x, T* y, std::int64_t n,
                  std::int64_t row_elements, void* stream) {
  if (n == 0) return;
  const int blocks = detail::blocks_for(n, detail::kThreadsPerBlock);
  dropout_kernel<<<blocks, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(mask, x, y, n,
                                                                                     row_elements);
  detail::check_launch("dropout_kernel", std::to_string(n) + " elements");
}

#define ZT_INSTANTIATE(T)                                                             \
  template void dropout_rows<T>(const math::DropoutMask&, const T*, T*, std::int64_t, \
                                std::int64_t, void*);
ZT_INSTANTIATE(float)
ZT_INSTANTIATE(BF16)
#undef ZT_INSTANTIATE

}  // namespace zt::nn::cuda
