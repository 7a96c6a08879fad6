// Row-major GEMMs on the CPU (oneDNN: it picks its kernels from the CPU's features, where
// Debian's OpenBLAS misdetects some AVX-512 Xeons and runs SSE3 kernels), and the thread
// count they use.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace zt::nn::cpu {

// C (m, n) = alpha * op(A) (m, k) * op(B) (k, n) + beta * C, all row-major.
// op(X) is X or X^T; lda/ldb/ldc are the row strides of the matrices as stored.
void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc);

// The same with bf16 A and B and an f32 C, products accumulated in f32: AVX512_BF16 (or AMX)
// instructions where the CPU has them, oneDNN's f32 kernels on other AVX-512 CPUs. Where
// oneDNN has no bf16 GEMM at all (AVX2-only CPUs), bf16_gemm_available() is false and
// gemm_bf16 throws: callers widen to f32 and call gemm_f32 there. An alpha other than 1 costs
// two passes over C (Note [bf16 GEMMs take alpha = 1]): where the caller can fold the scale
// into an operand it computes anyway, it should.
bool bf16_gemm_available();
// Whether that GEMM runs on AMX tiles (oneDNN's effective ISA, so DNNL_MAX_CPU_ISA caps it):
// small products (attention's tiles) beat f32 only there (Note [bf16 attention on bf16 GEMMs]).
bool bf16_gemm_has_amx();
void gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
               float alpha, const BF16* a, std::int64_t lda, const BF16* b, std::int64_t ldb,
               float beta, float* c, std::int64_t ldc);

// Threads the GEMMs may use in this process, whichever thread calls them (ranks must not
// oversubscribe the cores): a large GEMM is cut into this many pieces, run on parallel_for's
// pool (at most parallel_threads() at once). Starts at OpenMP's default (OMP_NUM_THREADS,
// else all cores).
void set_blas_threads(int threads);
int blas_threads();
// The OpenMP threads oneDNN itself would use for a call from this thread: always 1, as the
// pool, not OpenMP, runs a GEMM's pieces (Note [GEMMs split over the pool]).
int gemm_threads_in_this_thread();

// How a GEMM of C (m, n) with k-long sums is cut into pieces (Note [GEMMs split over the
// pool] in gemm_cpu.cpp): blocks of `grain` of C's rows (by_rows) or columns, over `extent`
// rows or columns, each run by parallel_for; one piece (grain == extent) when it is not worth
// splitting, from inside a parallel_for chunk, or on one thread.
struct GemmCut {
  bool by_rows;
  std::int64_t extent;
  std::int64_t grain;
};
GemmCut gemm_cut(std::int64_t m, std::int64_t n, std::int64_t k);

// Which library and kernels run the GEMMs, e.g. "oneDNN 2.6.3, ISA avx512_core_amx".
std::string gemm_library_description();

}  // namespace zt::nn::cpu
