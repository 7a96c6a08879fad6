// The cudaDataType_t that cuBLAS and cuBLASLt take for each storage type the CUDA kernels are
// built for. Private to nn/kernels/cuda.
#pragma once

#include <library_types.h>

#include "core/dtype.h"

namespace zt::nn::cuda::detail {

// BF16 is passed to cuBLAS as CUDA_R_16BF, which needs the same 2-byte layout.
static_assert(sizeof(BF16) == 2 && alignof(BF16) == 2, "BF16 must be layout-compatible with bf16");

template <typename T>
constexpr cudaDataType_t cuda_data_type();
template <>
constexpr cudaDataType_t cuda_data_type<float>() {
  return CUDA_R_32F;
}
template <>
constexpr cudaDataType_t cuda_data_type<BF16>() {
  return CUDA_R_16BF;
}

}  // namespace zt::nn::cuda::detail
