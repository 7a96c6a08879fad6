// Residual: y = x + m(x) forward, and dx = dy + m'(x)^T dy against finite differences.
#include "nn/layers/residual.h"

#include <gtest/gtest.h>

#include "cpu_test_context.h"
#include "gradient_check.h"
#include "nn/kernels/math/gelu_math.h"
#include "nn/layers/gelu.h"
#include "nn/layers/linear.h"
#include "nn/layers/sequential.h"

namespace zt::nn {
namespace {

std::unique_ptr<Module> linear_gelu(std::int64_t channels) {
  auto branch = std::make_unique<Sequential>();
  branch->add(std::make_unique<Linear>("fc", channels, channels, true));
  branch->add(std::make_unique<Gelu>());
  return branch;
}

TEST(ResidualGradients, MatchFiniteDifferences) {
  Residual residual(linear_gelu(4));
  EXPECT_EQ(residual.parameter_specs().size(), 2u);
  testing::expect_gradients_match(residual, Shape{2, 3, 4}, 61);
}

TEST(Residual, AddsTheBranchToTheInput) {
  MemoryTracker tracker(Device::cpu());
  Residual residual(std::make_unique<Gelu>());
  Tensor x = Tensor::zeros(Shape{2, 3}, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data_as<float>()[i] = 0.5f * static_cast<float>(i - 2);
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  const Tensor y = residual.forward({}, x, ctx);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const float xi = x.data_as<float>()[i];
    EXPECT_FLOAT_EQ(y.data_as<float>()[i], xi + math::gelu_forward(xi));
  }
  residual.backward({}, {}, y, ctx);
  EXPECT_TRUE(saved.empty());
}

}  // namespace
}  // namespace zt::nn
