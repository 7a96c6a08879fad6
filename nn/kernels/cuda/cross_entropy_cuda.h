// CUDA fused softmax cross-entropy (loss and dlogits in one pass over each row) on f32 or
// bf16 logits with fp32 math; a thin kernel over nn/kernels/math/cross_entropy_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace zt::nn::cuda {

// logits, dlogits (rows, columns); targets (rows) in [0, classes), classes <= columns; losses
// (rows) fp32. All device pointers, enqueued on `stream` (a cudaStream_t). T is float or BF16.
// Over each row's first `classes` logits z: losses[r] = log Σ exp(z) - z[target];
// dlogits = (softmax(z) - onehot(target)) * grad_scale, and 0 in the padded columns
// [classes, columns) (Note [Padded vocabulary] in nn/kernels/math/cross_entropy_math.h).
// dlogits may alias logits, or be nullptr to compute the losses only. A target outside
// [0, classes) traps the kernel (the stream then reports an error) instead of reading out of
// bounds.
template <typename T>
void softmax_cross_entropy(const T* logits, const std::int32_t* targets, std::int64_t rows,
                           std::int64_t classes, std::int64_t columns, float grad_scale,
                           float* losses, T* dlogits, void* stream);

// *sum (one double on the device) = Σ losses (rows) in double: one block, each thread adding
// its strided share in row order, then a fixed tree, so the result is the same every call.
void sum_losses(const float* losses, std::int64_t rows, double* sum, void* stream);

}  // namespace zt::nn::cuda
