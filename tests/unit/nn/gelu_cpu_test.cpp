// The CPU GELU loops (nn/kernels/cpu/gelu_cpu.h): the same bits on every vector path this CPU
// runs, at sizes 0, 1, 22 and 2^20 + 3, in place or not; within a stated tolerance of the
// double-precision formula; the backward against the double-precision derivative
// and finite differences of the forward; bf16 tensors rounded once from the f32 loop.
#include "nn/kernels/cpu/gelu_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/memory_tracker.h"
#include "core/random.h"
#include "nn/kernels/math/gelu_math.h"

namespace zt::nn::cpu {
namespace {

// Seeded normals of scale 4, with special values first where they fit.
std::vector<float> inputs(std::int64_t n, std::uint64_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            inf,
                            -inf,
                            0.0f,
                            -0.0f,
                            1e-30f,
                            30.0f,
                            -30.0f,
                            -9.672f,  // -2u = 80.0: where GELU clamps its exp's argument
                            -9.673f};
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = i < std::size(specials) && n > 22 ? specials[i] : 4.0f * standard_normal(seed, i);
  }
  return values;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // (memcmp of an empty vector's null data would be undefined, even for 0 bytes.)
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(GeluCpu, EveryVectorPathGivesTheBaselineBits) {
  for (const std::int64_t n :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{22}, (std::int64_t{1} << 20) + 3}) {
    const std::vector<float> x = inputs(n, 1), dy = inputs(n, 2);
    std::vector<float> y_baseline(x.size()), dx_baseline(x.size());
    gelu_forward_f32(x.data(), y_baseline.data(), n, VectorIsa::kBaseline);
    gelu_backward_f32(x.data(), dy.data(), dx_baseline.data(), n, VectorIsa::kBaseline);
    for (const VectorIsa isa : supported_vector_isas()) {
      const std::string what = std::string(vector_isa_name(isa)) + " size " + std::to_string(n);
      std::vector<float> y(x.size()), dx(x.size());
      gelu_forward_f32(x.data(), y.data(), n, isa);
      gelu_backward_f32(x.data(), dy.data(), dx.data(), n, isa);
      EXPECT_TRUE(same_bits(y, y_baseline)) << "forward, " << what;
      EXPECT_TRUE(same_bits(dx, dx_baseline)) << "backward, " << what;
      std::vector<float> in_place = x;  // y = x and dx = dy, as the Linear epilogues call them
      gelu_forward_f32(in_place.data(), in_place.data(), n, isa);
      EXPECT_TRUE(same_bits(in_place, y_baseline)) << "forward in place, " << what;
      in_place = dy;
      gelu_backward_f32(x.data(), in_place.data(), in_place.data(), n, isa);
      EXPECT_TRUE(same_bits(in_place, dx_baseline)) << "backward in place, " << what;
    }
  }
}

double gelu_double(double x) {
  const double s = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

double gelu_derivative_double(double x) {
  const double s = std::sqrt(2.0 / 3.14159265358979323846);
  const double t = std::tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * x * x);
}

// x = -12, -12 + 1/1024, ..., 12: every float of that grid, exactly.
std::vector<float> grid() {
  constexpr int kSteps = 12 * 1024;
  std::vector<float> xs(2 * kSteps + 1);
  for (int i = 0; i <= 2 * kSteps; ++i) xs[static_cast<std::size_t>(i)] = (i - kSteps) / 1024.0f;
  return xs;
}

TEST(GeluCpu, WithinTwoTenMillionthsOfTheDoubleFormula) {
  // Measured: at most 1.15e-7 (forward) and 1.65e-7 (backward) times max(1, |x|) apart.
  constexpr double kTolerance = 2e-7;
  const std::vector<float> xs = grid();
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<float> y(xs.size()), dx(xs.size()), ones(xs.size(), 1.0f);
  gelu_forward_f32(xs.data(), y.data(), n);
  gelu_backward_f32(xs.data(), ones.data(), dx.data(), n);
  double worst_forward = 0.0, worst_backward = 0.0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double scale = std::max(1.0, std::fabs(x));
    worst_forward = std::max(worst_forward, std::fabs(y[i] - gelu_double(x)) / scale);
    worst_backward = std::max(worst_backward, std::fabs(dx[i] - gelu_derivative_double(x)) / scale);
  }
  EXPECT_LE(worst_forward, kTolerance);
  EXPECT_LE(worst_backward, kTolerance);
  std::cout << "largest difference from the double formula / max(1, |x|): forward " << worst_forward
            << ", backward " << worst_backward << "\n";
}

TEST(GeluCpu, BackwardMatchesTheDoubleDerivativeAndFiniteDifferences) {
  const std::vector<float> xs = grid();
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<float> dx(xs.size()), ones(xs.size(), 1.0f);
  gelu_backward_f32(xs.data(), ones.data(), dx.data(), n);
  // Central differences of the float forward, step h = 1/64 (exact on the grid).
  constexpr float kStep = 1.0f / 64.0f;
  std::vector<float> plus(xs.size()), minus(xs.size()), y_plus(xs.size()), y_minus(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    plus[i] = xs[i] + kStep;
    minus[i] = xs[i] - kStep;
  }
  gelu_forward_f32(plus.data(), y_plus.data(), n);
  gelu_forward_f32(minus.data(), y_minus.data(), n);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    ASSERT_NEAR(dx[i], gelu_derivative_double(x), 3e-7 * std::max(1.0, std::fabs(x)))
        << "x = " << x;
    // h^2 f'''/6 (|f'''| < 2.5) plus float rounding of y (6e-8 |y|) over 2h.
    const double numeric = (static_cast<double>(y_plus[i]) - y_minus[i]) / (2.0 * kStep);
    ASSERT_NEAR(dx[i], numeric, 1.2e-4 + 4e-6 * std::fabs(x)) << "x = " << x;
  }
}

TEST(GeluCpu, Bf16TensorsRoundTheF32LoopOnce) {
  MemoryTracker tracker{Device::cpu()};
  const std::int64_t n = 3 * 256 + 5;  // blocks widened at a time, and a tail
  const Tensor x = Tensor::zeros(Shape{n}, DType::kBF16, tracker, MemoryCategory::kActivations);
  const Tensor dy = Tensor::zeros(Shape{n}, DType::kBF16, tracker, MemoryCategory::kActivations);
  const Tensor y = Tensor::zeros(Shape{n}, DType::kBF16, tracker, MemoryCategory::kActivations);
  const Tensor dx = Tensor::zeros(Shape{n}, DType::kBF16, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < n; ++i) {
    x.data_as<BF16>()[i] = BF16(3.0f * standard_normal(3, static_cast<std::uint64_t>(i)));
    dy.data_as<BF16>()[i] = BF16(standard_normal(4, static_cast<std::uint64_t>(i)));
  }
  gelu_forward(x, y);
  gelu_backward(x, dy, dx);
  for (std::int64_t i = 0; i < n; ++i) {
    const float xi = static_cast<float>(x.data_as<BF16>()[i]);
    const float dyi = static_cast<float>(dy.data_as<BF16>()[i]);
    EXPECT_EQ(y.data_as<BF16>()[i].bits, BF16(math::gelu_forward(xi)).bits) << "i = " << i;
    EXPECT_EQ(dx.data_as<BF16>()[i].bits, BF16(math::gelu_backward(xi, dyi)).bits) << "i = " << i;
  }
}

}  // namespace
}  // namespace zt::nn::cpu
