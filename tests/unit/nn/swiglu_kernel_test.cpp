// The CPU backend's SwiGLU ops against a double-precision loop, forward and backward (against
// central differences of the loop), in f32, bf16 and f16; the gate is the first half of each
// row; the gradient written over gate_up itself equals the one written elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

constexpr std::int64_t kRows = 4;
constexpr std::int64_t kHidden = 7;

// h[n, f] = silu(gate_up[n, f]) * gate_up[n, F + f], in double.
std::vector<double> swiglu_reference(const std::vector<double>& gate_up) {
  std::vector<double> h(static_cast<std::size_t>(kRows * kHidden));
  for (std::int64_t n = 0; n < kRows; ++n) {
    for (std::int64_t f = 0; f < kHidden; ++f) {
      const double gate = gate_up[static_cast<std::size_t>(n * 2 * kHidden + f)];
      const double up = gate_up[static_cast<std::size_t>(n * 2 * kHidden + kHidden + f)];
      h[static_cast<std::size_t>(n * kHidden + f)] = gate / (1.0 + std::exp(-gate)) * up;
    }
  }
  return h;
}

class SwigluKernel : public ::testing::TestWithParam<DType> {};

TEST_P(SwigluKernel, ForwardAndBackwardMatchADoubleLoopAndItsFiniteDifferences) {
  const DType dtype = GetParam();
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const Shape wide{kRows, 2 * kHidden};
  const Shape narrow{kRows, kHidden};
  // A spread of 3 reaches silu's flat and linear ends.
  const std::vector<float> gate_up = testing::random_values(wide.numel(), 21, dtype, 3.0f);
  const std::vector<float> dh = testing::random_values(narrow.numel(), 22, dtype);
  const auto make = [&](const std::vector<float>& values, const Shape& s) {
    return testing::make_tensor(values, s, dtype, tracker, MemoryCategory::kActivations);
  };
  const Tensor gate_up_t = make(gate_up, wide), dh_t = make(dh, narrow);
  const Tensor h_t = make(std::vector<float>(dh.size()), narrow);
  const Tensor d_gate_up_t = make(std::vector<float>(gate_up.size()), wide);
  cpu_kernels().swiglu_forward(context.device(), gate_up_t, h_t);
  cpu_kernels().swiglu_backward(context.device(), gate_up_t, dh_t, d_gate_up_t);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);

  const std::vector<double> x64(gate_up.begin(), gate_up.end());
  const std::vector<double> h_ref = swiglu_reference(x64);
  const std::vector<float> h = testing::to_floats(h_t);
  const double u = dtype == DType::kF32 ? 0.0 : testing::unit_roundoff(dtype);
  const double slack = 1e-6 + testing::denormal_error(dtype);
  for (std::size_t i = 0; i < h.size(); ++i) {
    ASSERT_NEAR(h[i], h_ref[i],
                u * std::fabs(h_ref[i]) + slack * std::max(1.0, std::fabs(h_ref[i])))
        << "h element " << i;
  }
  const auto loss = [&](const std::vector<double>& values) {
    const std::vector<double> hs = swiglu_reference(values);
    double sum = 0.0;
    for (std::size_t i = 0; i < hs.size(); ++i) sum += double{dh[i]} * hs[i];
    return sum;
  };
  const double step = 1e-5;
  const std::vector<float> analytic = testing::to_floats(d_gate_up_t);
  std::vector<double> probe = x64;
  for (std::size_t i = 0; i < x64.size(); ++i) {
    probe[i] = x64[i] + step;
    const double plus = loss(probe);
    probe[i] = x64[i] - step;
    const double minus = loss(probe);
    probe[i] = x64[i];
    const double numeric = (plus - minus) / (2 * step);
    ASSERT_NEAR(analytic[i], numeric,
                u * std::fabs(numeric) + 1e-5 * std::max(1.0, std::fabs(numeric)))
        << "d_gate_up element " << i << (i % (2 * kHidden) < kHidden ? " (gate)" : " (up)");
  }

  // The same gradient written over gate_up itself, as SwiGluMlp's backward does.
  cpu_kernels().swiglu_backward(context.device(), gate_up_t, dh_t, gate_up_t);
  testing::expect_bitwise_equal(testing::to_floats(gate_up_t), analytic, "in place");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SwigluKernel,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
                         testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
