// Softmax cross-entropy's row on the CPU: nn/kernels/math/cross_entropy_math.h compiled for
// each vector instruction set (Note [One loop, three instruction sets] in gelu_cpu.cpp).
#pragma once

#include <cstdint>

#include "core/vector_isa.h"

namespace zt::nn::cpu {

// math::softmax_cross_entropy_row on isa: returns the loss over the row's first `classes`
// logits and writes dz (columns), 0 past `classes` (Note [Padded vocabulary]); dz may alias z.
// Every isa gives the same bits.
float softmax_cross_entropy_row_f32(const float* z, std::int64_t classes, std::int64_t columns,
                                    std::int32_t target, float grad_scale, float* dz,
                                    VectorIsa isa = widest_vector_isa());

}  // namespace zt::nn::cpu
