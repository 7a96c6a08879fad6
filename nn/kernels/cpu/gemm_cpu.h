// Row-major single-precision GEMM on the CPU (OpenBLAS), and the BLAS thread count.
#pragma once

#include <cstdint>

namespace zt::nn::cpu {

// C (m, n) = alpha * op(A) (m, k) * op(B) (k, n) + beta * C, all row-major.
// op(X) is X or X^T; lda/ldb/ldc are the row strides of the matrices as stored.
void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc);

// Threads OpenBLAS may use in this process (ranks must not oversubscribe the cores).
void set_blas_threads(int threads);
int blas_threads();

}  // namespace zt::nn::cpu
