// Element-wise f32 sums on the CPU's widest vector unit, for the residual add and the chunk
// partials that gradient kernels fold together.
#pragma once

#include <cstdint>

#include "core/vector_isa.h"

namespace zt::nn::cpu {

// out[i] = a[i] + b[i] for i < n; out may be a or b. Every isa gives the same bits (one
// rounding per element).
void add_f32(const float* a, const float* b, float* out, std::int64_t n,
             VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
