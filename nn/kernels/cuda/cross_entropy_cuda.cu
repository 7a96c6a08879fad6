// CUDA fused softmax cross-entropy: one block per row (vocabularies are wide); max and
// Σ exp are block reductions in fp32, loss and dlogits come from the shared math.
#include <cuda_runtime.h>

#include "nn/kernels/cuda/cross_entropy_cuda.h"
#include "nn/kernels/cuda/launch_internal.h"
#include "nn/kernels/cuda/reduce_internal.h"
#include "nn/kernels/math/cross_entropy_math.h"

namespace zt::nn::cuda {
namespace {

template <typename T>
__global__ void softmax_cross_entropy_kernel(const T* logits, const std::int32_t* targets,
                                             std::int64_t rows, std::int64_t classes,
                                             std::int64_t columns, float grad_scale, float* losses,
                                             T* dlogits) {
  __shared__ float scratch[detail::kWarpsPerBlock];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* z = logits + r * columns;
    const std::int32_t target = targets[r];
    if (target < 0 || target >= classes) __trap();  // an out-of-range label is a caller bug
    float max_z = -INFINITY;
    for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      max_z = fmaxf(max_z, static_cast<float>(z[c]));
    }
    max_z = detail::block_max(max_z, scratch);
    // Read before the barrier inside block_sum, so no thread can have overwritten it yet
    // when dlogits aliases logits.
    const float z_target = static_cast<float>(z[target]);
    float sum = 0.0f;
    for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      sum += math::cross_entropy_exp(static_cast<float>(z[c]), max_z);
    }
    sum = detail::block_sum(sum, scratch);
    if (threadIdx.x == 0) losses[r] = math::cross_entropy_loss(sum, z_target, max_z);
    if (dlogits == nullptr) continue;
    const float inv_sum = 1.0f / sum;
    T* dz = dlogits + r * columns;
    for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      dz[c] = T(math::cross_entropy_dlogit(static_cast<float>(z[c]), max_z, inv_sum, c == target,
                                           grad_scale));
    }
    // The padded columns take no part (Note [Padded vocabulary]).
    for (std::int64_t c = classes + threadIdx.x; c < columns; c += blockDim.x) dz[c] = T(0.0f);
  }
}

// One block: a double per thread, then a shared-memory tree in double.
__global__ void sum_losses_kernel(const float* losses, std::int64_t rows, double* sum) {
  __shared__ double partial[detail::kThreadsPerBlock];
  double own = 0.0;
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) own += losses[r];
  partial[threadIdx.x] = own;
  __syncthreads();
  for (unsigned width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = partial[0];
}

}  // namespace

void sum_losses(const float* losses, std::int64_t rows, double* sum, void* stream) {
  sum_losses_kernel<<<1, detail::kThreadsPerBlock, 0, detail::as_stream(stream)>>>(losses, rows,
                                                                                   sum);
  detail::check_launch("sum_losses_kernel", "(" + std::to_string(rows) + ")");
}

template <typename T>
void softmax_cross_entropy(const T* logits, const std::int32_t* targets, std::int64_t rows,
                           std::int64_t classes, std::int64_t columns, float grad_scale,
                           float* losses, T* dlogits, void* stream) {
  if (rows == 0) return;
  softmax_cross_entropy_kernel<<<detail::blocks_for(rows, 1), detail::kThreadsPerBlock, 0,
                                 detail::as_stream(stream)>>>(logits, targets, rows, classes,
                                                              columns, grad_scale, losses, dlogits);
  detail::check_launch("softmax_cross_entropy_kernel", "(" + std::to_string(rows) + ", " +
                                                           std::to_string(classes) + " of " +
                                                           std::to_string(columns) + ")");
}

template void softmax_cross_entropy<float>(const float*, const std::int32_t*, std::int64_t,
                                           std::int64_t, std::int64_t, float, float*, float*,
                                           void*);
template void softmax_cross_entropy<BF16>(const BF16*, const std::int32_t*, std::int64_t,
                                          std::int64_t, std::int64_t, float, float*, BF16*, void*);

}  // namespace zt::nn::cuda
