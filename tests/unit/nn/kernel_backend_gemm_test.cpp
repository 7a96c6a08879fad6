// The CPU backend's general GEMM op (c = alpha op(a) op(b) + beta c over 2-D tensors) against
// a double-precision loop, for every transpose, f32/bf16/f16 operands and an f32 or
// compute-dtype c.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

constexpr std::int64_t kM = 5, kN = 7, kK = 9;
constexpr float kAlpha = 0.5f;
constexpr float kBeta = 0.25f;

std::vector<float> seeded(std::size_t n, std::uint64_t key, DType dtype) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i)
    values[i] = testing::representable(standard_normal(key, i), dtype);
  return values;
}

class KernelBackendGemm : public ::testing::TestWithParam<DType> {};

TEST_P(KernelBackendGemm, MatchesDoubleLoopForEveryTransposeAndOutputDtype) {
  const DType dtype = GetParam();
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext cpu(tracker);
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const DType c_dtype : {DType::kF32, dtype}) {
        SCOPED_TRACE(std::string(ta ? "A^T " : "A ") + (tb ? "B^T " : "B ") + "c " +
                     std::string(dtype_name(c_dtype)));
        const Shape a_shape = ta ? Shape{kK, kM} : Shape{kM, kK};
        const Shape b_shape = tb ? Shape{kN, kK} : Shape{kK, kN};
        const std::vector<float> a = seeded(kM * kK, 1, dtype);
        const std::vector<float> b = seeded(kK * kN, 2, dtype);
        const std::vector<float> c0 = seeded(kM * kN, 3, c_dtype);
        const Tensor at =
            testing::make_tensor(a, a_shape, dtype, tracker, MemoryCategory::kActivations);
        const Tensor bt =
            testing::make_tensor(b, b_shape, dtype, tracker, MemoryCategory::kActivations);
        const Tensor ct =
            testing::make_tensor(c0, Shape{kM, kN}, c_dtype, tracker, MemoryCategory::kActivations);
        testing::cpu_kernels().gemm(cpu.device(), ta, tb, kAlpha, at, bt, kBeta, ct);
        const std::vector<float> c = testing::to_floats(ct);
        const double rounding = c_dtype == DType::kF32 ? 0.0 : testing::unit_roundoff(c_dtype);
        for (std::int64_t i = 0; i < kM; ++i) {
          for (std::int64_t j = 0; j < kN; ++j) {
            double sum = 0.0, magnitude = 0.0;
            for (std::int64_t p = 0; p < kK; ++p) {
              const double av = a[static_cast<std::size_t>(ta ? p * kM + i : i * kK + p)];
              const double bv = b[static_cast<std::size_t>(tb ? j * kK + p : p * kN + j)];
              sum += av * bv;
              magnitude += std::fabs(av * bv);
            }
            const auto at_ij = static_cast<std::size_t>(i * kN + j);
            const double want = kAlpha * sum + kBeta * c0[at_ij];
            ASSERT_NEAR(c[at_ij], want, 1e-6 * kK * magnitude + 1e-6 + rounding * std::fabs(want))
                << "c[" << i << ", " << j << "]";
          }
        }
      }
    }
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0) << "gemm kept scratch";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelBackendGemm,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
                         testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
