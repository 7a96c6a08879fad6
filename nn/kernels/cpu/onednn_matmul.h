// Row-major f32 products through oneDNN's matmul primitive, which runs its brgemm kernels:
// for some shapes faster than its sgemm (Note [Which GEMMs take the matmul primitive] in
// gemm_cpu.cpp, which chooses). Internal to the CPU GEMMs; tests call it directly.
#pragma once

#include <cstdint>

namespace zt::nn::cpu {

// C (m, n) = op(A) (m, k) · op(B) (k, n) + beta · C, the operands as gemm_f32 takes them
// (row strides lda, ldb, ldc; op(X) = X^T when transposed); C is not read when beta is 0.
// Runs on the calling thread's OpenMP thread count, `threads` (a primitive is made for it).
void matmul_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                float* c, std::int64_t ldc, int threads);

// Primitives the calling thread keeps (its cache), for tests.
int matmul_primitives_cached_in_this_thread();

}  // namespace zt::nn::cpu
