// CUDA rotary position embedding on f32 or bf16 strided heads, in place, with fp32 math over
// nn/kernels/math/rope_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "nn/kernels/math/attention_math.h"

namespace zt::nn::cuda {

// base is a device pointer; work is enqueued on `stream` (a cudaStream_t). T is float or
// BF16. Turns pair i of every head (b, t, h), at base + head_row_start(strides, b, t, h), by
// (start_position + t) * inv_freq_i, or by its negative when `inverse`.
template <typename T>
void rope_rotate(T* base, const math::HeadStrides& strides, std::int64_t batch,
                 std::int64_t seq_len, std::int64_t n_heads, std::int64_t head_dim,
                 std::int64_t start_position, float theta, bool inverse, void* stream);

}  // namespace zt::nn::cuda
