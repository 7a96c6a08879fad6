// Row-major GEMM on cuBLASLt with a fused epilogue (bias, GELU, their gradients), fp32
// accumulation: the Linear layers' GEMMs (Note [GELU in the GEMMs] in kernel_backend.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nn/kernels/cuda/gemm_cublas.h"

namespace zt::nn::cuda {

// What runs on C (m, n), the row-major product alpha op(A) op(B) + beta C, before it is
// stored. Vectors are device pointers in Out's type unless said otherwise.
struct LtEpilogue {
  enum class Kind {
    kNone,
    // C[i, j] += bias[j] (n); bias may be null (then kNone).
    kBias,
    // aux[i, j] = C[i, j] + bias[j] (bias may be null), then C = gelu(aux); aux (m, n) with
    // row stride ldc, which must be a multiple of 8.
    kGelu,
    // C = gelu'(aux) ⊙ C (aux read, as kGelu wrote it); with bias_grad, bias_grad[j] =
    // Σ_i C[i, j] (n), written, not accumulated.
    kGeluBackward,
    // bias_grad[i] = Σ_k op(A)[i, k] (m), written: with op(A) = dy^T, the bias gradient of
    // the product dW = dy^T x (cuBLASLt's BGRADB, B being A after the operand swap).
    kBiasGradFromA,
  };
  Kind kind = Kind::kNone;
  const void* bias = nullptr;
  void* bias_grad = nullptr;
  void* aux = nullptr;
};

// C (m, n) = epilogue(alpha op(A) (m, k) op(B) (k, n) + beta C), row-major as gemm(), enqueued
// on `stream` through the cuBLAS handle's cuBLASLt context with `workspace` (device memory of
// workspace_bytes). Instantiated for (In, Out) = (float, float), (BF16, float), (BF16, BF16).
// Throws CublasError naming the epilogue and shapes when cuBLASLt has no algorithm for them.
template <typename In, typename Out>
void gemm_lt(CublasHandle& handle, void* stream, bool transpose_a, bool transpose_b, std::int64_t m,
             std::int64_t n, std::int64_t k, float alpha, const In* a, std::int64_t lda,
             const In* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc,
             const LtEpilogue& epilogue, void* workspace, std::size_t workspace_bytes);

}  // namespace zt::nn::cuda
