// bench_gemm_backends: the CPU's two candidate matmul libraries side by side in one run, at
// the GEMM shapes bench_gpt_step's models run and at 1024^3, on 1 and 2 threads: OpenBLAS
// as the dynamic linker loaded it (its kernels chosen by its own CPU detection, printed)
// and oneDNN (its ISA printed). oneDNN's bf16 GEMM is timed next to them. This is the
// measurement behind the runtime's choice of oneDNN; OpenBLAS's core type can only be
// forced before it loads (`OPENBLAS_CORETYPE=SkylakeX bench_gemm_backends`).
// `--mkl PATH/libmkl_rt.so.N` adds Intel MKL (e.g. the `mkl` wheel from PyPI; not a
// dependency of the project), opened at run time in its sequential layer and run the way the
// runtime runs oneDNN: one call per piece of C on parallel_for's threads (Note [GEMMs split
// over the pool] in nn/kernels/cpu/gemm_cpu.cpp).
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/gemm_cpu.h"

namespace {

using Clock = std::chrono::steady_clock;

struct GemmShape {
  const char* what;
  bool transpose_a, transpose_b;
  std::int64_t m, n, k;
};

// MKL's row-major cblas_sgemm (LP64: 32-bit integers), from libmkl_rt opened at run time.
using MklSgemm = void (*)(int layout, int transpose_a, int transpose_b, int m, int n, int k,
                          float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                          float* c, int ldc);
constexpr int kMklRowMajor = 101, kMklNoTrans = 111, kMklTrans = 112;
constexpr int kMklThreadingSequential = 1;
MklSgemm g_mkl_sgemm = nullptr;

// Opens MKL at `path` and selects its sequential layer; exits with a message on failure.
void open_mkl(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "bench_gemm_backends: --mkl: cannot open %s: %s\n", path, dlerror());
    std::exit(2);
  }
  using SetLayer = int (*)(int);
  auto set_layer = reinterpret_cast<SetLayer>(dlsym(handle, "MKL_Set_Threading_Layer"));
  g_mkl_sgemm = reinterpret_cast<MklSgemm>(dlsym(handle, "cblas_sgemm"));
  if (set_layer == nullptr || g_mkl_sgemm == nullptr) {
    std::fprintf(stderr,
                 "bench_gemm_backends: --mkl: %s has no MKL_Set_Threading_Layer or "
                 "cblas_sgemm\n",
                 path);
    std::exit(2);
  }
  set_layer(kMklThreadingSequential);
}

// C = op(A) op(B) on MKL, cut into the pieces the runtime cuts oneDNN's into (gemm_cut) on
// parallel_for's threads.
void mkl_in_pieces(const GemmShape& s, const float* a, std::int64_t lda, const float* b,
                   std::int64_t ldb, float* c) {
  const zt::nn::cpu::GemmCut cut = zt::nn::cpu::gemm_cut(s.m, s.n, s.k);
  const int op_a = s.transpose_a ? kMklTrans : kMklNoTrans;
  const int op_b = s.transpose_b ? kMklTrans : kMklNoTrans;
  const auto i32 = [](std::int64_t v) { return static_cast<int>(v); };
  zt::parallel_for(cut.extent, cut.grain, [&](std::int64_t first, std::int64_t last) {
    if (cut.by_rows) {
      g_mkl_sgemm(kMklRowMajor, op_a, op_b, i32(last - first), i32(s.n), i32(s.k), 1.0f,
                  s.transpose_a ? a + first : a + first * lda, i32(lda), b, i32(ldb), 0.0f,
                  c + first * s.n, i32(s.n));
    } else {
      g_mkl_sgemm(kMklRowMajor, op_a, op_b, i32(s.m), i32(last - first), i32(s.k), 1.0f, a,
                  i32(lda), s.transpose_b ? b + first * ldb : b + first, i32(ldb), 0.0f, c + first,
                  i32(s.n));
    }
  });
}

// Enough repeats for ~0.2 s of work at 100 GFLOP/s, at least 3; the best run counts.
template <typename Fn>
double best_gflops(const GemmShape& s, Fn&& gemm) {
  const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
  const int repeats = std::clamp(static_cast<int>(2e10 / flops), 3, 200);
  gemm();  // warm-up: first-touch pages, JIT kernels, thread pools
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    gemm();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

void run_shape(const GemmShape& s, int threads) {
  const std::int64_t rows_a = s.transpose_a ? s.k : s.m, cols_a = s.transpose_a ? s.m : s.k;
  const std::int64_t rows_b = s.transpose_b ? s.n : s.k, cols_b = s.transpose_b ? s.k : s.n;
  std::vector<float> a(static_cast<std::size_t>(rows_a * cols_a)),
      b(static_cast<std::size_t>(rows_b * cols_b)), c(static_cast<std::size_t>(s.m * s.n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.125f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.25f;
  std::vector<zt::BF16> a16(a.begin(), a.end()), b16(b.begin(), b.end());

  openblas_set_num_threads(threads);
  const double openblas = best_gflops(s, [&] {
    cblas_sgemm(CblasRowMajor, s.transpose_a ? CblasTrans : CblasNoTrans,
                s.transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(s.m),
                static_cast<blasint>(s.n), static_cast<blasint>(s.k), 1.0f, a.data(),
                static_cast<blasint>(cols_a), b.data(), static_cast<blasint>(cols_b), 0.0f,
                c.data(), static_cast<blasint>(s.n));
  });
  openblas_set_num_threads(1);  // its idle pool must not compete with oneDNN's below
  // the runtime's GEMMs run their pieces on parallel_for's pool: both counts, as RankSession
  zt::nn::cpu::set_blas_threads(threads);
  zt::set_parallel_threads(threads);
  const double onednn = best_gflops(s, [&] {
    zt::nn::cpu::gemm_f32(s.transpose_a, s.transpose_b, s.m, s.n, s.k, 1.0f, a.data(), cols_a,
                          b.data(), cols_b, 0.0f, c.data(), s.n);
  });
  const double onednn_bf16 = best_gflops(s, [&] {
    zt::nn::cpu::gemm_bf16(s.transpose_a, s.transpose_b, s.m, s.n, s.k, 1.0f, a16.data(), cols_a,
                           b16.data(), cols_b, 0.0f, c.data(), s.n);
  });
  const double mkl = g_mkl_sgemm == nullptr ? 0.0 : best_gflops(s, [&] {
    mkl_in_pieces(s, a.data(), cols_a, b.data(), cols_b, c.data());
  });
  std::printf("%-22s %c%c %5lld %5lld %5lld %7d %10.1f %10.1f %10.1f", s.what,
              s.transpose_a ? 'T' : 'N', s.transpose_b ? 'T' : 'N', static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k), threads, openblas, onednn,
              onednn_bf16);
  if (g_mkl_sgemm != nullptr) std::printf(" %10.1f", mkl);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--mkl") {
    open_mkl(argv[2]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--mkl PATH/libmkl_rt.so.N]\n", argv[0]);
    return 2;
  }
  std::printf("# OpenBLAS %s, core \"%s\" (its own CPU detection)\n", openblas_get_config(),
              openblas_get_corename());
  std::printf("# %s\n", zt::nn::cpu::gemm_library_description().c_str());
  std::printf("# GFLOP/s, best of repeated runs; op(A) (m, k) x op(B) (k, n)\n");
  std::printf("%-22s %2s %5s %5s %5s %7s %10s %10s %10s%s\n", "shape", "op", "m", "n", "k",
              "threads", "OpenBLAS", "oneDNN", "oneDNN-bf16", g_mkl_sgemm ? "        MKL" : "");
  const GemmShape shapes[] = {
      {"110k mlp fc forward", false, true, 512, 256, 64},
      {"110k mlp fc dW", true, false, 256, 64, 512},
      {"3.3M qkv forward", false, true, 1024, 768, 256},
      {"3.3M mlp proj dX", false, false, 1024, 1024, 256},
      {"3.3M mlp fc dW", true, false, 1024, 256, 1024},
      {"20M qkv forward", false, true, 1024, 1536, 512},
      {"20M mlp fc forward", false, true, 1024, 2048, 512},
      {"20M qkv dW", true, false, 1536, 512, 1024},
      {"20M mlp fc dW", true, false, 2048, 512, 1024},
      {"20M mlp proj dW", true, false, 512, 2048, 1024},
      {"20M head dW", true, false, 1024, 512, 1024},
      {"20M mlp fc dX", false, false, 1024, 512, 2048},
      {"20M attention scores", false, true, 256, 256, 64},
      {"square 1024", false, false, 1024, 1024, 1024},
  };
  for (const int threads : {1, 2}) {
    for (const GemmShape& s : shapes) run_shape(s, threads);
  }
  return 0;
}
