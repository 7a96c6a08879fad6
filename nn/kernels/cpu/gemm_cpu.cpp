// oneDNN behind gemm_cpu.h; the only file that knows it.
//
// libdnnl is opened with dlopen at the first GEMM rather than linked, because it brings
// OpenMP (libgomp) with it and libgomp reads its wait policy once, when it loads. Its
// default spins a waiting thread for a while; when the cores are shared with other
// processes (ranks on one host, a test run in parallel, a build) every GEMM then waits for a
// descheduled spinner: measured 10-30x slower at 2 threads on a busy 2-core machine, and no
// slower than OpenBLAS with passive waiting. So OMP_WAIT_POLICY=passive is set first, unless
// the user chose a policy; a process that already loaded libgomp keeps its own.
#include "nn/kernels/cpu/gemm_cpu.h"

#include <dlfcn.h>
#include <dnnl.h>

#include <atomic>
#include <cstdlib>

#include "core/error.h"
#include "core/parallel_for.h"

namespace zt::nn::cpu {
namespace {

static_assert(sizeof(BF16) == 2 && alignof(BF16) == 2, "BF16 must be layout-compatible with bf16");

constexpr const char* kLibrary = "libdnnl.so.2";  // oneDNN 2.x, the API declared below

// The entry points used, as oneDNN 2.x declares them. dnnl_gemm_bf16bf16f32 is exported with
// C linkage (row-major like dnnl_sgemm) but declared only in oneDNN's internal headers; its
// bfloat16_t is a 16-bit raw-bits struct, as BF16 is.
struct Dnnl {
  dnnl_status_t (*sgemm)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float, const float*,
                         dnnl_dim_t, const float*, dnnl_dim_t, float, float*, dnnl_dim_t);
  dnnl_status_t (*gemm_bf16)(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float, const BF16*,
                             dnnl_dim_t, const BF16*, dnnl_dim_t, float, float*, dnnl_dim_t);
  const dnnl_version_t* (*version)();
  dnnl_cpu_isa_t (*effective_isa)();
  const char* (*isa_name)(dnnl_cpu_isa_t);
  void (*omp_set_num_threads)(int);
  int (*omp_get_max_threads)();
  int default_threads;  // OpenMP's own count when oneDNN loaded, for "not set"
};

template <typename Fn>
void bind(void* handle, const char* name, Fn*& fn) {
  void* symbol = ::dlsym(handle, name);
  ZT_CHECK(symbol != nullptr, std::string(kLibrary) + " has no " + name);
  fn = reinterpret_cast<Fn*>(symbol);
}

const Dnnl& dnnl() {
  static const Dnnl api = [] {
    ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
    void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      throw Error(std::string("cannot load oneDNN, which runs the CPU GEMMs (") + ::dlerror() +
                  "): install libdnnl-dev (scripts/setup)");
    }
    Dnnl d{};
    bind(handle, "dnnl_sgemm", d.sgemm);
    bind(handle, "dnnl_gemm_bf16bf16f32", d.gemm_bf16);
    bind(handle, "dnnl_version", d.version);
    bind(handle, "dnnl_get_effective_cpu_isa", d.effective_isa);
    bind(handle, "dnnl_cpu_isa2str", d.isa_name);
    // The OpenMP oneDNN was built with, loaded with it.
    bind(handle, "omp_set_num_threads", d.omp_set_num_threads);
    bind(handle, "omp_get_max_threads", d.omp_get_max_threads);
    d.default_threads = d.omp_get_max_threads();
    return d;
  }();
  return api;
}

// 0 = not set: OpenMP's default applies.
std::atomic<int> g_threads{0};

// oneDNN (OpenMP build) parallelises over omp_get_max_threads(), an OpenMP setting of the
// calling thread; the count is process-wide here, so each calling thread adopts it lazily.
// A GEMM inside a chunk of a parallel_for (per-head attention) runs on one thread: the loop
// already keeps the rank's threads busy, and a team per chunk would multiply them.
const Dnnl& dnnl_with_threads() {
  const Dnnl& d = dnnl();
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
  check_status(dnnl_with_threads().sgemm(op(transpose_a), op(transpose_b), m, n, k, alpha, a, lda,
                                         b, ldb, beta, c, ldc),
               "sgemm");
}

bool bf16_gemm_available() {
  // Asked once, with a 1x1x1 product: oneDNN answers "unimplemented" below AVX-512.
  static const bool available = [] {
    const BF16 one(1.0f);
    float c = 0.0f;
    return dnnl().gemm_bf16('N', 'N', 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &c, 1) ==
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
  check_status(dnnl_with_threads().gemm_bf16(op(transpose_a), op(transpose_b), m, n, k, alpha, a,
                                             lda, b, ldb, beta, c, ldc),
               "bf16 gemm");
}

void set_blas_threads(int threads) {
  ZT_CHECK(threads >= 1, "BLAS thread count must be positive");
  g_threads.store(threads, std::memory_order_relaxed);
}

int blas_threads() {
  const int threads = g_threads.load(std::memory_order_relaxed);
  return threads != 0 ? threads : dnnl().omp_get_max_threads();
}

int gemm_threads_in_this_thread() { return dnnl_with_threads().omp_get_max_threads(); }

std::string gemm_library_description() {
  const Dnnl& d = dnnl();
  const dnnl_version_t* version = d.version();
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + ", ISA " + d.isa_name(d.effective_isa());
}

}  // namespace zt::nn::cpu
