// The CPU backend's RMSNorm ops against a double-precision loop, forward and backward (its
// gradients checked against central differences of the loop), in f32, bf16 and f16, on rows
// with a non-zero mean (which RMSNorm must not subtract).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu_test_context.h"
#include "precision_check.h"

namespace zt::nn {
namespace {

using testing::cpu_kernels;

constexpr std::int64_t kRows = 5;
constexpr std::int64_t kChannels = 12;
constexpr double kEps = 1e-5;

// y = x / sqrt(mean(x^2) + eps) * w, row by row, in double.
std::vector<double> rms_norm_reference(const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> y(x.size());
  for (std::int64_t r = 0; r < kRows; ++r) {
    const double* row = x.data() + r * kChannels;
    double sq = 0.0;
    for (std::int64_t c = 0; c < kChannels; ++c) sq += row[c] * row[c];
    const double rstd = 1.0 / std::sqrt(sq / kChannels + kEps);
    for (std::int64_t c = 0; c < kChannels; ++c) {
      y[static_cast<std::size_t>(r * kChannels + c)] =
          row[c] * rstd * w[static_cast<std::size_t>(c)];
    }
  }
  return y;
}

class RmsNormKernel : public ::testing::TestWithParam<DType> {};

TEST_P(RmsNormKernel, ForwardAndBackwardMatchADoubleLoopAndItsFiniteDifferences) {
  const DType dtype = GetParam();
  MemoryTracker tracker(Device::cpu());
  testing::CpuTestContext context(tracker);
  const Shape shape{kRows, kChannels};
  std::vector<float> x = testing::random_values(shape.numel(), 11, dtype, 2.0f);
  for (float& v : x) v = testing::representable(v + 1.5f, dtype);  // a mean RMSNorm keeps
  std::vector<float> w = testing::random_values(kChannels, 12, dtype, 0.5f);
  for (float& v : w) v = testing::representable(v + 1.0f, dtype);
  const std::vector<float> dy = testing::random_values(shape.numel(), 13, dtype);
  const auto make = [&](const std::vector<float>& values, const Shape& s) {
    return testing::make_tensor(values, s, dtype, tracker, MemoryCategory::kActivations);
  };
  const Tensor x_t = make(x, shape), w_t = make(w, Shape{kChannels}), dy_t = make(dy, shape);
  const Tensor y_t = make(std::vector<float>(x.size()), shape);
  const Tensor dx_t = make(std::vector<float>(x.size()), shape);
  const Tensor rstd =
      Tensor::zeros(Shape{kRows}, DType::kF32, tracker, MemoryCategory::kActivations);
  // Non-zero starting gradients pin that dweight accumulates.
  Tensor dweight =
      Tensor::zeros(Shape{kChannels}, DType::kF32, tracker, MemoryCategory::kGradients);
  for (float& v : dweight.span<float>()) v = 0.25f;
  cpu_kernels().rms_norm_forward(context.device(), x_t, w_t, static_cast<float>(kEps), y_t, rstd);
  cpu_kernels().rms_norm_backward(context.device(), x_t, w_t, rstd, dy_t, dx_t, dweight);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0);

  const std::vector<double> x64(x.begin(), x.end());
  const std::vector<double> w64(w.begin(), w.end());
  const std::vector<double> y_ref = rms_norm_reference(x64, w64);
  const std::vector<float> y = testing::to_floats(y_t);
  const double u = dtype == DType::kF32 ? 0.0 : testing::unit_roundoff(dtype);
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], y_ref[i], u * std::fabs(y_ref[i]) + 1e-6) << "y element " << i;
  }
  for (std::int64_t r = 0; r < kRows; ++r) {
    double sq = 0.0;
    for (std::int64_t c = 0; c < kChannels; ++c)
      sq += x64[r * kChannels + c] * x64[r * kChannels + c];
    EXPECT_NEAR(rstd.data_as<float>()[r], 1.0 / std::sqrt(sq / kChannels + kEps), 1e-6) << r;
  }

  // L = Σ dy y: dL/dx and dL/dw by central differences of the double loop.
  const auto loss = [&](const std::vector<double>& xs, const std::vector<double>& ws) {
    const std::vector<double> ys = rms_norm_reference(xs, ws);
    double sum = 0.0;
    for (std::size_t i = 0; i < ys.size(); ++i) sum += double{dy[i]} * ys[i];
    return sum;
  };
  const double h = 1e-4;
  const std::vector<float> dx = testing::to_floats(dx_t);
  std::vector<double> probe = x64;
  for (std::size_t i = 0; i < x64.size(); ++i) {
    probe[i] = x64[i] + h;
    const double plus = loss(probe, w64);
    probe[i] = x64[i] - h;
    const double minus = loss(probe, w64);
    probe[i] = x64[i];
    const double numeric = (plus - minus) / (2 * h);
    ASSERT_NEAR(dx[i], numeric, u * std::fabs(numeric) + 2e-5) << "dx element " << i;
  }
  std::vector<double> w_probe = w64;
  for (std::size_t c = 0; c < w64.size(); ++c) {
    w_probe[c] = w64[c] + h;
    const double plus = loss(x64, w_probe);
    w_probe[c] = w64[c] - h;
    const double minus = loss(x64, w_probe);
    w_probe[c] = w64[c];
    const double numeric = (plus - minus) / (2 * h);
    EXPECT_NEAR(dweight.data_as<float>()[c], 0.25 + numeric,
                2e-5 * std::max(1.0, std::fabs(numeric)))
        << "dweight " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RmsNormKernel,
                         ::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
                         testing::dtype_test_name);

}  // namespace
}  // namespace zt::nn
