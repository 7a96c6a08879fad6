// The CPU GEMMs (f32 and bf16 inputs) against a double-precision loop, for every transpose,
// odd sizes and padded row strides, on every instruction set oneDNN can be capped to here:
// GemmCpuIsa re-runs this binary's GemmCpu tests in child processes with DNNL_MAX_CPU_ISA
// set, because oneDNN reads it once, before its first GEMM.
#include "nn/kernels/cpu/gemm_cpu.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/parallel_for.h"
#include "nn/kernels/cpu/onednn_matmul.h"
#include "support/program_run.h"
#include "support/temp_dir.h"

namespace zt::nn::cpu {
namespace {

struct Case {
  bool transpose_a, transpose_b;
  std::int64_t m, n, k;
};

// Values with few mantissa bits (exact in bf16), so both GEMMs see the reference's numbers.
std::vector<float> random_matrix(std::int64_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> steps(-64, 64);
  std::vector<float> values(static_cast<std::size_t>(size));
  for (float& v : values) v = static_cast<float>(steps(rng)) / 32.0f;
  return values;
}

// Runs one case through `gemm` (f32 or bf16 operands) and checks each element against the
// double loop within f32 summation error: k 2^-24 of the sum of |terms|, doubled for alpha,
// beta and the library's blocking.
template <typename T, typename Gemm>
void check_against_double(const Case& c, Gemm&& gemm, float alpha = 0.5f) {
  const std::int64_t rows_a = c.transpose_a ? c.k : c.m, cols_a = c.transpose_a ? c.m : c.k;
  const std::int64_t rows_b = c.transpose_b ? c.n : c.k, cols_b = c.transpose_b ? c.k : c.n;
  const std::int64_t lda = cols_a + 3, ldb = cols_b + 1, ldc = c.n + 2;  // padded strides
  const std::vector<float> a = random_matrix(rows_a * lda, 1);
  const std::vector<float> b = random_matrix(rows_b * ldb, 2);
  std::vector<float> out = random_matrix(c.m * ldc, 3);
  const std::vector<float> c0 = out;
  const std::vector<T> a_in(a.begin(), a.end()), b_in(b.begin(), b.end());
  const float beta = 0.75f;
  gemm(c.transpose_a, c.transpose_b, c.m, c.n, c.k, alpha, a_in.data(), lda, b_in.data(), ldb, beta,
       out.data(), ldc);
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (std::int64_t p = 0; p < c.k; ++p) {
        const double x = c.transpose_a ? a[p * lda + i] : a[i * lda + p];
        const double y = c.transpose_b ? b[j * ldb + p] : b[p * ldb + j];
        sum += x * y;
        magnitude += std::fabs(x * y);
      }
      const double ref = alpha * sum + beta * c0[i * ldc + j];
      const double bound = 2.0 * static_cast<double>(c.k + 2) * std::ldexp(1.0, -24) *
                           (std::fabs(alpha) * magnitude + std::fabs(beta * c0[i * ldc + j]));
      ASSERT_LE(std::fabs(out[i * ldc + j] - ref), bound)
          << "element (" << i << ", " << j << ") of " << (c.transpose_a ? 'T' : 'N')
          << (c.transpose_b ? 'T' : 'N') << " " << c.m << "x" << c.n << "x" << c.k;
    }
    // The padding between rows of C is not written.
    for (std::int64_t j = c.n; j < ldc; ++j) ASSERT_EQ(out[i * ldc + j], c0[i * ldc + j]);
  }
}

std::vector<Case> every_transpose() {
  std::vector<Case> cases;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      cases.push_back({ta, tb, 37, 29, 53});    // odd sizes: every kernel's tail paths
      cases.push_back({ta, tb, 64, 130, 300});  // long k: the library's k blocking
    }
  }
  return cases;
}

TEST(GemmCpu, ReportsLibraryAndIsa) {
  const std::string description = gemm_library_description();
  EXPECT_EQ(description.rfind("oneDNN ", 0), 0u) << description;
  EXPECT_NE(description.find(", ISA cpu_isa_"), std::string::npos) << description;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("gemm library: %s; bf16 GEMM %s; OpenMP wait policy %s;\n", description.c_str(),
              bf16_gemm_available() ? "available" : "not available", policy ? policy : "unset");
  // Set before oneDNN (and its OpenMP) loaded, unless the user had chosen one.
  EXPECT_NE(policy, nullptr);
}

TEST(GemmCpu, F32MatchesDoubleLoopForEveryTranspose) {
  for (const Case& c : every_transpose()) check_against_double<float>(c, gemm_f32);
}

// oneDNN's matmul primitive (onednn_matmul.h) for every transpose, padded strides and beta
// 0.75 (its sum post-op); a shape asked for again reuses its cached primitive on new matrices.
TEST(GemmCpu, MatmulPrimitiveMatchesDoubleLoopForEveryTranspose) {
  const auto matmul = [](bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float,
                         const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                         float beta, float* c, std::int64_t ldc) {
    matmul_f32(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, gemm_threads_in_this_thread());
  };
  const int cached_before = matmul_primitives_cached_in_this_thread();
  for (int round = 0; round < 2; ++round) {
    for (const Case& c : every_transpose()) check_against_double<float>(c, matmul, 1.0f);
  }
  EXPECT_EQ(matmul_primitives_cached_in_this_thread(),
            cached_before + static_cast<int>(every_transpose().size()));
}

// A weight gradient's shape (dW (out, in) += dY^T X, out > in) takes the matmul primitive
// (Note [Which GEMMs take the matmul primitive]) and matches the double loop, also from two
// threads at once (each has its own primitives); a narrowing one stays on sgemm.
TEST(GemmCpu, WideningWeightGradientsTakeTheMatmulPrimitive) {
  const Case widening{true, false, 512, 256, 512};
  const int cached_before = matmul_primitives_cached_in_this_thread();
  const auto gemm = [](bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       float alpha, const float* a, std::int64_t lda, const float* b,
                       std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
    gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
  check_against_double<float>(widening, gemm, 1.0f);
  EXPECT_EQ(matmul_primitives_cached_in_this_thread(), cached_before + 1);
  check_against_double<float>({true, false, 256, 512, 512}, gemm, 1.0f);
  check_against_double<float>(widening, gemm, 0.5f);  // alpha != 1: sgemm
  EXPECT_EQ(matmul_primitives_cached_in_this_thread(), cached_before + 1);
  std::thread other([&] {
    check_against_double<float>(widening, gemm, 1.0f);
    EXPECT_EQ(matmul_primitives_cached_in_this_thread(), 1);
  });
  check_against_double<float>(widening, gemm, 1.0f);
  other.join();
}

TEST(GemmCpu, Bf16MatchesDoubleLoopForEveryTransposeOrRefusesClearly) {
  if (!bf16_gemm_available()) {
    const BF16 one(1.0f);
    float out = 0.0f;
    EXPECT_THROW(gemm_bf16(false, false, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &out, 1),
                 InternalError);
    return;
  }
  for (const Case& c : every_transpose()) check_against_double<BF16>(c, gemm_bf16);
}

// An alpha other than 1 is applied around a GEMM with alpha 1 (Note [bf16 GEMMs take alpha =
// 1]): within the same bounds for an alpha that is not a power of two; alpha 0 reads neither
// operand and scales C by beta, beta 0 then writing zeros over whatever C held.
TEST(GemmCpu, Bf16AlphaIsAppliedAroundTheGemm) {
  if (!bf16_gemm_available()) GTEST_SKIP() << "no bf16 GEMM on this CPU";
  for (const Case& c : every_transpose()) check_against_double<BF16>(c, gemm_bf16, 0.3f);
  check_against_double<BF16>({false, false, 200, 90, 300}, gemm_bf16, -1.7f);  // split, negative
  std::vector<float> out = {2.0f, 4.0f, 8.0f, 16.0f};
  gemm_bf16(false, false, 2, 2, 3, 0.0f, nullptr, 3, nullptr, 2, 0.5f, out.data(), 2);
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f, 4.0f, 8.0f}));
  out.assign(4, std::numeric_limits<float>::quiet_NaN());
  gemm_bf16(false, false, 2, 2, 3, 0.0f, nullptr, 3, nullptr, 2, 0.0f, out.data(), 2);
  EXPECT_EQ(out, std::vector<float>(4, 0.0f));
}

TEST(GemmCpu, EmptyOutputDoesNothingAndNegativeSizesAreRefused) {
  float out = 7.0f;
  gemm_f32(false, false, 0, 1, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, &out, 1);
  gemm_f32(false, false, 1, 0, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, &out, 1);
  EXPECT_EQ(out, 7.0f);
  EXPECT_THROW(gemm_f32(false, false, -1, 1, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, &out, 1),
               InternalError);
}

// The thread count is process-wide, as the runtime sets it once per rank, and oneDNN runs
// on the calling thread alone whichever thread calls it: the pool runs a GEMM's pieces (Note
// [GEMMs split over the pool]), and an OpenMP team per caller would multiply the threads.
TEST(GemmCpu, ThreadCountHoldsForGemmsFromOtherThreads) {
  const int before = blas_threads();
  set_blas_threads(2);
  EXPECT_EQ(blas_threads(), 2);
  int seen_in_thread = -1;
  std::thread worker([&] {
    float one = 1.0f, out = 0.0f;
    gemm_f32(false, false, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &out, 1);
    seen_in_thread = gemm_threads_in_this_thread();
  });
  worker.join();
  EXPECT_EQ(seen_in_thread, 1);
  EXPECT_EQ(gemm_threads_in_this_thread(), 1);
  EXPECT_THROW(set_blas_threads(0), InternalError);
  set_blas_threads(before);
}

// Products past the split threshold run as pieces on the pool's threads (Note [GEMMs split
// over the pool]): C cut by rows when it is at least as tall as wide, else by columns, with
// an uneven last piece, for every transpose, padded strides and beta; the matmul primitive's
// widening weight gradient likewise; and bf16. Each against the double loop.
TEST(GemmCpu, LargeProductsSplitOverThePoolMatchDoubleLoop) {
  const int blas_before = blas_threads(), pool_before = parallel_threads();
  set_blas_threads(2);
  set_parallel_threads(2);
  std::vector<Case> cases;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      cases.push_back({ta, tb, 200, 90, 300});  // 5.4M multiply-adds: rows, 112 + 88
      cases.push_back({ta, tb, 90, 201, 300});  // columns, 112 + 89
    }
  }
  for (const Case& c : cases) check_against_double<float>(c, gemm_f32);
  const auto gemm = [](bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       float alpha, const float* a, std::int64_t lda, const float* b,
                       std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
    gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
  check_against_double<float>({true, false, 520, 256, 512}, gemm, 1.0f);  // matmul primitive
  if (bf16_gemm_available()) {
    for (const Case& c : cases) check_against_double<BF16>(c, gemm_bf16);
  }
  set_parallel_threads(pool_before);
  set_blas_threads(blas_before);
}

// Every ISA cap this CPU can take (oneDNN clamps a cap above the CPU to what it has): the
// GemmCpu tests above, the layers' mixed-precision tests (bf16 Linear on the bf16 GEMM,
// or widened to f32 where the cap leaves none) and bf16 attention's (on the bf16 GEMM with
// AMX, widened below it) pass under each, and the AVX2 cap really runs AVX2 kernels.
TEST(GemmCpuIsa, EveryIsaCapPassesTheGemmTests) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  testing::TempDir dir;
  for (const char* isa : {"SSE41", "AVX2", "AVX512_CORE", "AVX512_CORE_BF16", "ALL"}) {
    const testing::ProgramResult run = testing::run_program(
        {self,
         "--gtest_filter=GemmCpu.*:*MixedPrecision*:AttentionBf16Products.*:*/"
         "AttentionTiled*/bf16"},
        dir.path(), isa,
        {{"DNNL_MAX_CPU_ISA", std::string(isa)},
         {"OMP_WAIT_POLICY",
          std::string(isa) == "ALL" ? std::optional<std::string>("active") : std::nullopt}},
        std::chrono::seconds(60));
    EXPECT_EQ(run.exit_code, 0) << "DNNL_MAX_CPU_ISA=" << isa << "\n" << run.output();
    EXPECT_NE(run.out.find("[ RUN      ] GemmCpu.F32MatchesDoubleLoop"), std::string::npos)
        << run.output();
    EXPECT_EQ(run.out.find("FAILED"), std::string::npos) << run.output();
    // No wait policy given: the library chose passive; "ALL" keeps the user's choice.
    const char* policy = std::string(isa) == "ALL" ? "active;" : "passive;";
    EXPECT_NE(run.out.find(std::string("OpenMP wait policy ") + policy), std::string::npos)
        << run.output();
    if (std::string(isa) == "AVX2") {
      EXPECT_NE(run.out.find("ISA cpu_isa_avx2;"), std::string::npos) << run.output();
    }
  }
}

}  // namespace
}  // namespace zt::nn::cpu
