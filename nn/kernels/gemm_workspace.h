// The workspace a CUDA Linear op gives cuBLASLt, as a plain constant (no CUDA header), so the
// memory estimator can count it without the CUDA backend.
#pragma once

#include <cstdint>

namespace zt::nn {

// Every linear_forward and linear_backward of the CUDA kernel backend allocates this many
// bytes of MemoryCategory::kWorkspace through the context's tracker for the duration of the
// call, first, and hands them to each of its cuBLASLt GEMMs (32 MiB: what NVIDIA recommends
// for Hopper, and what llm.c gives cuBLASLt). linear_backward then allocates, while that is
// alive, the small bias-gradient scratch of Note [GELU in the GEMMs]: x_pre_gelu's `in`
// elements in the compute dtype when x_pre_gelu_dbias is defined (freed after the dx GEMM),
// and `out` f32 elements when dbias is defined (freed after the dweight GEMM).
inline constexpr std::int64_t kCublasLtWorkspaceBytes = std::int64_t{32} << 20;

}  // namespace zt::nn
