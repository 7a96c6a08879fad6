// oneDNN behind gemm_cpu.h: its sgemm and bf16 GEMM, or its matmul primitive where that is
// faster (Note [Which GEMMs take the matmul primitive]), split over the rank's threads (Note
// [GEMMs split over the pool]).
#include "nn/kernels/cpu/gemm_cpu.h"

#include <algorithm>
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

// Note [GEMMs split over the pool]
// oneDNN (OpenMP build) always runs on the calling thread alone: a GEMM worth splitting is cut
// here, into as many pieces as it may use threads (blas_threads(), at most the pool's), each
// a single-threaded oneDNN call on a block of C's rows (or columns, when C is wider than
// tall), run by parallel_for. One team of threads then serves every CPU loop: the pool's
// workers poll for a while before they sleep (Note [Yield before sleeping] in
// core/parallel_for.cpp), where OpenMP's passive workers (which the runtime needs, see
// onednn_api.cpp) went back to sleep after every GEMM and each next GEMM waited for one to
// wake, while the pool's own worker competed with it for the cores. Measured on a 2-core Xeon
// (AVX-512), 2 threads, alternating in one run: GPT steps 110k 3.7-4.3 -> 2.6-2.8 ms, 3.3M
// 85-90 -> 77-79 ms, bf16 20M 277 -> 236 ms, fp32 20M within noise (0-3%). A piece of n rows
// repacks all of B (of n columns, all of A), a second read of an operand per extra thread
// that the measured steps absorb.
constexpr std::int64_t kMinSplitProduct = std::int64_t{1} << 22;  // multiply-adds
// Pieces start on 16-row (column) boundaries: whole vector blocks of oneDNN's kernels.
constexpr std::int64_t kSplitAlignment = 16;

// oneDNN's OpenMP team size for calls from this thread: one, set once per thread (OpenMP
// keeps it per thread).
const OneDnnApi& dnnl_on_this_thread() {
  const OneDnnApi& d = onednn();
  thread_local bool applied = false;
  if (!applied) {
    d.omp_set_num_threads(1);
    applied = true;
  }
  return d;
}

// Calls piece(rows, cols, a, b, c) on the blocks of C gemm_cut gives, in parallel over the
// pool when there are several.
template <typename T, typename Piece>
void split_over_pool(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                     float* c, std::int64_t ldc, const Piece& piece) {
  const GemmCut cut = gemm_cut(m, n, k);
  if (cut.grain >= cut.extent) {
    piece(m, n, a, b, c);
    return;
  }
  parallel_for(cut.extent, cut.grain, [&](std::int64_t first, std::int64_t last) {
    if (cut.by_rows) {
      piece(last - first, n, transpose_a ? a + first : a + first * lda, b, c + first * ldc);
    } else {
      piece(m, last - first, a, transpose_b ? b + first * ldb : b + first, c + first);
    }
  });
}

char op(bool transpose) { return transpose ? 'T' : 'N'; }

// c (m, n; row stride ldc) *= factor, in parallel over rows; factor 0 writes zeros (BLAS's
// beta = 0: whatever c held, NaN included, is not read).
void scale_matrix(float* c, std::int64_t m, std::int64_t n, std::int64_t ldc, float factor) {
  parallel_for(m, parallel_row_grain(n), [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      float* row = c + i * ldc;
      if (factor == 0.0f) {
        std::fill(row, row + n, 0.0f);
      } else {
        for (std::int64_t j = 0; j < n; ++j) row[j] *= factor;
      }
    }
  });
}

// Note [Which GEMMs take the matmul primitive]
// oneDNN's sgemm is slower on A^T B with more rows than columns, the weight gradients
// dW (out, in) += dY^T X of layers that widen (qkv, MLP fc, the head): measured alternating
// in one run on a 2-core Xeon (AVX-512), 2 threads, the matmul primitive (brgemm kernels)
// took 1.12-1.29x less time there (1024 rows; out x in 1024x256, 1536x512, 2048x512,
// 1024x512) and was within noise or slower elsewhere (forward, dX, the narrowing dW), so it
// takes only those. Small products and the GEMMs inside a parallel_for chunk (attention's
// tiles) stay on sgemm, whose call costs less. alpha must be 1 (the primitive has no scale).
// Since the GEMMs run as one-thread pieces (Note [GEMMs split over the pool]) the two are
// level on those shapes (sgemm's time over the primitive's 0.98-1.00, and 0.87-1.06 on the
// other shapes of the 3.3M and 20M GPT steps): the edge came from OpenMP's two-thread split
// of sgemm, not from the primitive's kernels. It stays where it was measured no slower.
bool matmul_is_faster(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                      std::int64_t k, float alpha) {
  constexpr std::int64_t kMinProduct = std::int64_t{1} << 26;  // multiply-adds
  return transpose_a && !transpose_b && alpha == 1.0f && m > n && k > 0 &&
         m * n * k >= kMinProduct && !in_parallel_chunk();
}

}  // namespace

GemmCut gemm_cut(std::int64_t m, std::int64_t n, std::int64_t k) {
  const bool by_rows = m >= n;
  const std::int64_t extent = by_rows ? m : n;
  const std::int64_t pieces =
      in_parallel_chunk() ? 1 : std::min(blas_threads(), parallel_threads());
  if (pieces == 1 || m * n * k < kMinSplitProduct) return {by_rows, extent, extent};
  const std::int64_t share = (extent + pieces - 1) / pieces;
  return {by_rows, extent, (share + kSplitAlignment - 1) / kSplitAlignment * kSplitAlignment};
}

void gemm_f32(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  // chosen on the whole product, as measured, before it is split
  const bool matmul = matmul_is_faster(transpose_a, transpose_b, m, n, k, alpha);
  split_over_pool(transpose_a, transpose_b, m, n, k, a, lda, b, ldb, c, ldc,
                  [&](std::int64_t rows, std::int64_t cols, const float* a_part,
                      const float* b_part, float* c_part) {
                    if (matmul) {
                      matmul_f32(transpose_a, transpose_b, rows, cols, k, a_part, lda, b_part, ldb,
                                 beta, c_part, ldc, 1);
                      return;
                    }
                    check_onednn_status(dnnl_on_this_thread().sgemm(
                                            op(transpose_a), op(transpose_b), rows, cols, k, alpha,
                                            a_part, lda, b_part, ldb, beta, c_part, ldc),
                                        "sgemm");
                  });
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

bool bf16_gemm_has_amx() {
  static const bool amx = [] {
    const auto isa = static_cast<unsigned>(onednn().effective_isa());
    const auto amx_isa = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_amx);
    return bf16_gemm_available() && (isa & amx_isa) == amx_isa;
  }();
  return amx;
}

void gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
               float alpha, const BF16* a, std::int64_t lda, const BF16* b, std::int64_t ldb,
               float beta, float* c, std::int64_t ldc) {
  ZT_CHECK(m >= 0 && n >= 0 && k >= 0, "gemm with a negative dimension");
  if (m == 0 || n == 0) return;
  // Note [bf16 GEMMs take alpha = 1]
  // oneDNN 2.6's bf16 GEMM leaves its AMX / AVX512_BF16 kernels for any alpha but 1: measured
  // on a 2-core Xeon with AMX, 2 threads, 1024^3 1.6 -> 5.5 ms and a 64 x 256 x 64 tile 14 ->
  // 91 us. So alpha is applied around a GEMM with alpha 1, C = alpha (A B + (beta / alpha) C):
  // two passes over C, which cost a fraction of that. alpha = 0 reads neither operand.
  if (alpha != 1.0f) {
    if (alpha == 0.0f) {
      scale_matrix(c, m, n, ldc, beta);
      return;
    }
    if (beta != 0.0f) scale_matrix(c, m, n, ldc, beta / alpha);
    gemm_bf16(transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, beta != 0.0f ? 1.0f : 0.0f,
              c, ldc);
    scale_matrix(c, m, n, ldc, alpha);
    return;
  }
  split_over_pool(transpose_a, transpose_b, m, n, k, a, lda, b, ldb, c, ldc,
                  [&](std::int64_t rows, std::int64_t cols, const BF16* a_part, const BF16* b_part,
                      float* c_part) {
                    check_onednn_status(dnnl_on_this_thread().gemm_bf16(
                                            op(transpose_a), op(transpose_b), rows, cols, k, alpha,
                                            a_part, lda, b_part, ldb, beta, c_part, ldc),
                                        "bf16 gemm");
                  });
}

void set_blas_threads(int threads) {
  ZT_CHECK(threads >= 1, "BLAS thread count must be positive");
  g_threads.store(threads, std::memory_order_relaxed);
}

int blas_threads() {
  const int threads = g_threads.load(std::memory_order_relaxed);
  return threads != 0 ? threads : onednn().default_threads;
}

int gemm_threads_in_this_thread() { return dnnl_on_this_thread().omp_get_max_threads(); }

std::string gemm_library_description() {
  const OneDnnApi& d = onednn();
  const dnnl_version_t* version = d.version();
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + ", ISA " + d.isa_name(d.effective_isa());
}

}  // namespace zt::nn::cpu
