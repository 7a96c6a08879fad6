// The GEMM plan key's description, operand alignment, and the fallback log line.
#include "nn/kernels/gemm_plan_cache.h"

#include <cstdio>

namespace zt::nn {

std::string describe(const GemmPlanKey& key) {
  std::string text = "(m " + std::to_string(key.m) + ", n " + std::to_string(key.n) + ", k " +
                     std::to_string(key.k) + ")";
  if (key.transpose_a) text += " A^T";
  if (key.transpose_b) text += " B^T";
  text += ", " + std::string(dtype_name(key.in_dtype)) + " -> " +
          std::string(dtype_name(key.out_dtype)) + ", epilogue " + std::string(key.epilogue);
  if (key.epilogue != "DEFAULT") {
    text += " (" + std::string(dtype_name(key.bias_dtype)) + " bias)";
  }
  text += ", alignment A " + std::to_string(key.alignment_a_bytes) + " B " +
          std::to_string(key.alignment_b_bytes) + " C " + std::to_string(key.alignment_c_bytes) +
          " bytes";
  return text;
}

std::uint32_t operand_alignment_bytes(const void* address, std::int64_t row_stride,
                                      std::size_t element_bytes) {
  const auto where = reinterpret_cast<std::uintptr_t>(address);
  const auto stride_bytes = static_cast<std::uintptr_t>(row_stride) * element_bytes;
  std::uint32_t alignment = 256;
  while (alignment > 1 && (where % alignment != 0 || stride_bytes % alignment != 0)) {
    alignment /= 2;
  }
  return alignment;
}

void log_to_stderr(const std::string& line) {
  std::fprintf(stderr, "zerotrain: %s\n", line.c_str());
}

}  // namespace zt::nn
