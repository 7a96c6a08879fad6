// CUDA next-token selection on f32 or bf16 logits: a block per row over the shared math of
// nn/kernels/math/token_select_math.h, the same ids as the CPU's.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "nn/kernels/math/token_select_math.h"

namespace zt::nn::cuda {

// logits: row b's `classes` logits at first_offset + b * row_stride (device memory); ids
// (rows) i32 on the device. Enqueued on `stream` (a cudaStream_t). T is float or BF16.
template <typename T>
void select_tokens(const T* logits, std::int64_t rows, std::int64_t row_stride,
                   std::int64_t first_offset, std::int64_t classes,
                   const math::TokenSampling& sampling, std::int32_t* ids, void* stream);

}  // namespace zt::nn::cuda
