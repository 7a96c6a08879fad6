// oneDNN behind gemm_cpu.h; the only file that includes dnnl.h.
#include "nn/kernels/cpu/gemm_cpu.h"

#include <dnnl.h>
#include <dnnl_debug.h>
#include <omp.h>

#include <atomic>

#include "core/error.h"

// Exported by libdnnl (C linkage, row-major like dnnl_sgemm) but declared only in its
// internal headers in 2.x. oneDNN's bfloat16_t is a 16-bit raw-bits struct, as BF16 is.
extern "C" dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N,
                                               dnnl_dim_t K, float alpha, const zt::BF16* A,
                                               dnnl_dim_t lda, const zt::BF16* B, dnnl_dim_t ldb,
                                               float beta, float* C, dnnl_dim_t ldc);

namespace zt::nn::cpu {
namespace {

static_assert(sizeof(BF16) == 2 && alignof(BF16) == 2, "BF16 must be layout-compatible with bf16");

// 0 = not set: OpenMP's default applies.
std::atomic<int> g_threads{0};

// oneDNN (OpenMP build) parallelises over omp_get_max_threads(), an OpenMP setting of the
// calling thread; the count is process-wide here, so each calling thread adopts it lazily.
void apply_threads() {
  thread_local int applied = 0;
  const int wanted = g_threads.load(std::memory_order_relaxed);
  if (wanted != 0 && wanted != applied) {
    omp_set_num_threads(wanted);
    applied = wanted;
  }
}

void check_status(dnnl_status_t status, const char* what) {
  ZT_CHECK(status == dnnl_success,
           std::string(what) + " failed in oneDNN (status " + std::to_string(status) + ")");
}

char op(bool transpose) { return transpose ? 'T' : 'N'; }

}  // namespace

void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  apply_threads();
  check_status(
      dnnl_sgemm(op(transpose_a), op(transpose_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
      "sgemm");
}

void gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
               float alpha, const BF16* a, std::int64_t lda, const BF16* b, std::int64_t ldb,
               float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  apply_threads();
  check_status(dnnl_gemm_bf16bf16f32(op(transpose_a), op(transpose_b), m, n, k, alpha, a, lda, b,
                                     ldb, beta, c, ldc),
               "bf16 gemm");
}

bool bf16_gemm_available() {
  // Asked once, with a 1x1x1 product: oneDNN answers "unimplemented" below AVX-512.
  static const bool available = [] {
    const BF16 one(1.0f);
    float c = 0.0f;
    return dnnl_gemm_bf16bf16f32('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &c, 1) ==
               dnnl_success &&
           c == 1.0f;
  }();
  return available;
}

void set_blas_threads(int threads) {
  ZT_CHECK(threads >= 1, "BLAS thread count must be positive");
  g_threads.store(threads, std::memory_order_relaxed);
}

int blas_threads() {
  const int threads = g_threads.load(std::memory_order_relaxed);
  return threads != 0 ? threads : omp_get_max_threads();
}

std::string gemm_library_description() {
  const dnnl_version_t* version = dnnl_version();
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + ", ISA " + dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
}

}  // namespace zt::nn::cpu
