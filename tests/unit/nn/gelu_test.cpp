// GELU: the tanh approximation and its derivative against a double-precision reference,
// and the layer's backward against finite differences.
#include "nn/layers/gelu.h"

#include <gtest/gtest.h>

#include <cmath>

#include "gradient_check.h"
#include "nn/kernels/math/gelu_math.h"

namespace zt::nn {
namespace {

double gelu_reference(double x) {
  const double s = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

TEST(GeluMath, ForwardMatchesDoubleReference) {
  for (const double x : {-6.0, -3.0, -1.0, -0.5, -1e-3, 0.0, 0.25, 1.0, 2.5, 8.0}) {
    EXPECT_NEAR(math::gelu_forward(static_cast<float>(x)), gelu_reference(x),
                1e-6 * std::max(1.0, std::fabs(x)))
        << "x = " << x;
  }
  EXPECT_NEAR(math::gelu_forward(1.0f), 0.8411920, 1e-6);  // the tanh form at 1, tabulated
}

TEST(GeluMath, BackwardMatchesDoubleCentralDifference) {
  for (const double x : {-4.0, -1.5, -0.7, 0.0, 0.3, 1.0, 3.0}) {
    const double h = 1e-5;
    const double numeric = (gelu_reference(x + h) - gelu_reference(x - h)) / (2.0 * h);
    EXPECT_NEAR(math::gelu_backward(static_cast<float>(x), 2.0f), 2.0 * numeric, 1e-5)
        << "x = " << x;
  }
}

TEST(GeluGradients, MatchFiniteDifferences) {
  Gelu gelu;
  testing::expect_gradients_match(gelu, Shape{3, 2, 5}, 51);
}

}  // namespace
}  // namespace zt::nn
