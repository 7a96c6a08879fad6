// Next-token selection on the CPU: a loop over rows of nn/kernels/math/token_select_math.h.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "nn/kernels/math/token_select_math.h"

namespace zt::nn::cpu {

// KernelBackend::select_tokens on host tensors: ids[b] for each row's last logits.
void select_tokens(const Tensor& logits, std::int64_t classes, const math::TokenSampling& sampling,
                   const Tensor& ids);

}  // namespace zt::nn::cpu
