// OpenBLAS behind gemm_cpu.h; the only file that includes cblas.h.
#include "nn/kernels/cpu/gemm_cpu.h"

#include <cblas.h>

#include "core/error.h"

namespace zt::nn::cpu {

void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void set_blas_threads(int threads) {
  ZT_CHECK(threads >= 1, "BLAS thread count must be positive");
  openblas_set_num_threads(threads);
}

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace zt::nn::cpu
