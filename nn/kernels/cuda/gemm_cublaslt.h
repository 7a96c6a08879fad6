// Row-major GEMM on cuBLASLt with a fused epilogue (bias, GELU, their gradients), fp32
// accumulation: the Linear layers' GEMMs (Note [GELU in the GEMMs] in kernel_backend.h). Where
// cuBLASLt offers no algorithm, the same arithmetic runs unfused (Note [Fused when offered]).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nn/kernels/cuda/gemm_cublas.h"
#include "nn/kernels/gemm_plan_cache.h"

namespace zt::nn::cuda {

// What runs on C (m, n), the row-major product alpha op(A) op(B) + beta C, before it is
// stored. bias and aux are device pointers in Out's type; bias_grad is f32.
struct LtEpilogue {
  enum class Kind {
    kNone,
    // C[i, j] += bias[j] (n); bias may be null (then kNone).
    kBias,
    // aux[i, j] = C[i, j] + bias[j] (bias may be null), then C = gelu(aux); aux (m, n) with
    // row stride ldc (fused only when ldc is a multiple of 8, cuBLASLt's rule for aux).
    kGelu,
    // C = gelu'(aux) ⊙ C (aux read, as kGelu wrote it); with bias_grad, bias_grad[j] =
    // Σ_i C[i, j] (n) in f32, written, not accumulated.
    kGeluBackward,
    // bias_grad[i] = Σ_k op(A)[i, k] (m) in f32, written: with op(A) = dy^T, the bias gradient
    // of the product dW = dy^T x (cuBLASLt's BGRADB, B being A after the operand swap).
    kBiasGradFromA,
  };
  Kind kind = Kind::kNone;
  const void* bias = nullptr;
  float* bias_grad = nullptr;
  void* aux = nullptr;
};

// The fused plan of one GemmPlanKey: cuBLASLt's descriptors and algorithm (gemm_cublaslt.cpp).
struct LtPlan;
// One GPU's decisions, fused or not, per call geometry (Note [Fused when offered]).
using LtPlans = GemmPlanCache<LtPlan>;

// C (m, n) = epilogue(alpha op(A) (m, k) op(B) (k, n) + beta C), row-major as gemm(), enqueued
// on `stream`, which must be the handle's (the unfused path runs cuBLAS on the handle), with
// `workspace` (device memory of workspace_bytes). `plans` decides, once per shape, dtypes,
// epilogue and operand alignment, whether cuBLASLt runs the epilogue or the plain GEMM is
// followed by the bias, GELU and bias-gradient kernels. The unfused path needs C dense
// (ldc == n) for any epilogue, and for kBiasGradFromA op(A) = A^T with A dense (lda == m).
// Instantiated for (In, Out) = (float, float), (BF16, float), (BF16, BF16).
template <typename In, typename Out>
void gemm_lt(CublasHandle& handle, LtPlans& plans, void* stream, bool transpose_a, bool transpose_b,
             std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const In* a,
             std::int64_t lda, const In* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc,
             const LtEpilogue& epilogue, void* workspace, std::size_t workspace_bytes);

// The key gemm_lt decides by for these arguments: shape, strides, dtypes, the epilogue and
// the alignment of each operand's address and row stride. Same instantiations as gemm_lt.
template <typename In, typename Out>
GemmPlanKey lt_plan_key(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                        std::int64_t k, const In* a, std::int64_t lda, const In* b,
                        std::int64_t ldb, const Out* c, std::int64_t ldc,
                        const LtEpilogue& epilogue, std::size_t workspace_bytes);

}  // namespace zt::nn::cuda
