// Rotary position embedding on the CPU, in place on strided heads: loops over
// nn/kernels/math/rope_math.h (see KernelBackend::rope_forward).
#pragma once

#include <cstdint>

#include "nn/kernels/attention_heads.h"

namespace zt::nn::cpu {

// Turns every head of position start_position + t by +angle (inverse: -angle), in place.
void rope_rotate(const AttentionHeads& heads, std::int64_t start_position, float theta,
                 bool inverse);

}  // namespace zt::nn::cpu
