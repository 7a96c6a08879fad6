// The operand checks of the block quantization ops, shared by every backend (CPU, CUDA and
// the CUDA dry run) so that all of them refuse the same calls.
#pragma once

#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "nn/kernels/math/block_quant_math.h"

namespace zt::nn {

// values (count) floating; payload (quant_payload_words) i32; scales (quant_block_count) f32.
inline void check_block_quant_operands(const math::BlockQuantFormat& format, const Tensor& values,
                                       const Tensor& payload, const Tensor& scales,
                                       const char* op) {
  ZT_CHECK(format.block_elements > 0, std::string(op) + ": block_elements must be positive");
  ZT_CHECK(is_floating(values.dtype()), std::string(op) + ": values must be floating");
  ZT_CHECK(payload.dtype() == DType::kI32 && scales.dtype() == DType::kF32,
           std::string(op) + ": payload is i32 words and scales f32");
  const std::int64_t count = values.numel();
  ZT_CHECK(payload.numel() == math::quant_payload_words(count, format) &&
               scales.numel() == math::quant_block_count(count, format.block_elements),
           std::string(op) + ": payload or scales sized for another count of " +
               std::to_string(count) + " elements");
}

}  // namespace zt::nn
