// oneDNN behind gemm_cpu.h: its sgemm and bf16 GEMM, or its matmul primitive where that is
// faster (Note [Which GEMMs take the matmul primitive]), on the rank's thread count.
#include "nn/kernels/cpu/gemm_cpu.h"

#include <atomic>
#include <string>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/onednn_api.h"
#include "nn/kernels/cpu/onednn_matmul.h"

namespace zt::nn::cpu {
namespace {

// 0 = not set: OpenMP's default applies.
std::atomic<int> g_threads{0};

// oneDNN (OpenMP build) parallelises over omp_get_max_threads(), an OpenMP setting of the
// calling thread; the count is process-wide here, so each calling thread adopts it lazily.
// A GEMM inside a chunk of a parallel_for (per-head attention) runs on one thread: the loop
// already keeps the rank's threads busy, and a team per chunk would multiply them.
const OneDnnApi& dnnl_with_threads() {
  const OneDnnApi& d = onednn();
  thread_local int applied = 0;
  int wanted = g_threads.load(std::memory_order_relaxed);
  if (in_parallel_chunk()) {
    wanted = 1;
  } else if (wanted == 0 && applied != 0) {
    wanted = d.default_threads;  // back from a chunk's 1 to OpenMP's own count
  }
  if (wanted != 0 && wanted != applied) {
    d.omp_set_num_threads(wanted);
    applied = wanted;
  }
  return d;
}

char op(bool transpose) { return transpose ? 'T' : 'N'; }

// Note [Which GEMMs take the matmul primitive]
// oneDNN's sgemm is slower on A^T B with more rows than columns, the weight gradients
// dW (out, in) += dY^T X of layers that widen (qkv, MLP fc, the head): measured alternating
// in one run on a 2-core Xeon (AVX-512), 2 threads, the matmul primitive (brgemm kernels)
// took 1.12-1.29x less time there (1024 rows; out x in 1024x256, 1536x512, 2048x512,
// 1024x512) and was within noise or slower elsewhere (forward, dX, the narrowing dW), so it
// takes only those. Small products and the GEMMs inside a parallel_for chunk (attention's
// tiles) stay on sgemm, whose call costs less. alpha must be 1 (the primitive has no scale).
bool matmul_is_faster(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                      std::int64_t k, float alpha) {
  constexpr std::int64_t kMinProduct = std::int64_t{1} << 26;  // multiply-adds
  return transpose_a && !transpose_b && alpha == 1.0f && m > n && k > 0 &&
         m * n * k >= kMinProduct && !in_parallel_chunk();
}

}  // namespace

void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  if (matmul_is_faster(transpose_a, transpose_b, m, n, k, alpha)) {
    const int threads = dnnl_with_threads().omp_get_max_threads();
    matmul_f32(transpose_a, transpose_b, m, n, k, a, lda, b, ldb, beta, c, ldc, threads);
    return;
  }
  check_onednn_status(dnnl_with_threads().sgemm(op(transpose_a), op(transpose_b), m, n, k, alpha, a,
                                                lda, b, ldb, beta, c, ldc),
                      "sgemm");
}

bool bf16_gemm_available() {
  // Asked once, with a 1x1x1 product: oneDNN answers "unimplemented" below AVX-512.
  static const bool available = [] {
    const BF16 one(1.0f);
    float c = 0.0f;
    return onednn().gemm_bf16('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &c, 1) ==
               dnnl_success &&
           c == 1.0f;
  }();
  return available;
}

void gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
               float alpha, const BF16* a, std::int64_t lda, const BF16* b, std::int64_t ldb,
               float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  check_onednn_status(dnnl_with_threads().gemm_bf16(op(transpose_a), op(transpose_b), m, n, k,
                                                    alpha, a, lda, b, ldb, beta, c, ldc),
                      "bf16 gemm");
}

void set_blas_threads(int threads) {
  ZT_CHECK(threads >= 1, "BLAS thread count must be positive");
  g_threads.store(threads, std::memory_order_relaxed);
}

int blas_threads() {
  const int threads = g_threads.load(std::memory_order_relaxed);
  return threads != 0 ? threads : onednn().omp_get_max_threads();
}

int gemm_threads_in_this_thread() { return dnnl_with_threads().omp_get_max_threads(); }

std::string gemm_library_description() {
  const OneDnnApi& d = onednn();
  const dnnl_version_t* version = d.version();
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + ", ISA " + d.isa_name(d.effective_isa());
}

}  // namespace zt::nn::cpu
