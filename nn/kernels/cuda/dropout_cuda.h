// CUDA inverted dropout on f32 or bf16 storage: a thin loop over the shared mask and scale of
// nn/kernels/math/dropout_math.h, so the GPU keeps exactly the elements the CPU keeps.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "nn/kernels/math/dropout_math.h"

namespace zt::nn::cuda {

// y (n) = x (n) dropped by `mask`, x viewed as rows of row_elements (row s: sample
// mask.first_sample + s). Device pointers; work is enqueued on `stream` (a cudaStream_t).
// T is float or BF16. n == 0 enqueues nothing. y may alias x.
template <typename T>
void dropout_rows(const math::DropoutMask& mask, const T* x, T* y, std::int64_t n,
                  std::int64_t row_elements, void* stream);

}  // namespace zt::nn::cuda
