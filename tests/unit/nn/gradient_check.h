// Finite-difference gradient checks for modules: central differences in double precision
// around f32 parameters, against the module's analytic backward.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/loss/softmax_cross_entropy.h"
#include "nn/module.h"

namespace zt::nn::testing {

// Owns a module's parameters and gradients as separate tensors.
struct ModuleState {
  std::vector<Tensor> params;
  std::vector<Tensor> grads;
};

inline ModuleState make_state(const Module& module, MemoryTracker& tracker, std::uint64_t seed) {
  ModuleState state;
  std::uint64_t index = 0;
  for (const auto& spec : module.parameter_specs()) {
    Tensor p = Tensor::zeros(spec.shape, DType::kF32, tracker, MemoryCategory::kParameters);
    for (float& v : p.span<float>()) v = 0.5f * standard_normal(seed, index++);
    state.params.push_back(p);
    state.grads.push_back(
        Tensor::zeros(spec.shape, DType::kF32, tracker, MemoryCategory::kGradients));
  }
  return state;
}

// L(x, params) = Σ w_i · y_i with fixed random weights w: a scalar whose gradient exercises
// every output element.
inline double weighted_output_sum(Module& module, const ModuleState& state, const Tensor& input,
                                  const std::vector<float>& weights, CpuTestContext& cpu_context) {
  SavedActivations saved;
  ModuleContext ctx = cpu_context.module(saved);
  Tensor y = module.forward(state.params, input, ctx);
  double sum = 0.0;
  const float* out = y.data_as<float>();
  for (std::int64_t i = 0; i < y.numel(); ++i)
    sum += double{weights[static_cast<std::size_t>(i)]} * out[i];
  return sum;
}

namespace detail {

// Runs forward and backward with dL/dy = w (random, from seed + 2), then compares every
// parameter gradient, and dL/dx when `check_input`, with central differences of Σ w·y.
inline void check_against_finite_differences(Module& module, ModuleState& state,
                                             const Tensor& input, std::uint64_t seed,
                                             double tolerance, bool check_input) {
  MemoryTracker tracker(Device::cpu());
  SavedActivations saved;
  testing::CpuTestContext cpu_context(tracker);
  ModuleContext ctx = cpu_context.module(saved);
  Tensor y = module.forward(state.params, input, ctx);
  std::vector<float> weights(static_cast<std::size_t>(y.numel()));
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = standard_normal(seed + 2, i);
  Tensor dy = Tensor::zeros(y.shape(), DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::size_t i = 0; i < weights.size(); ++i) dy.data_as<float>()[i] = weights[i];
  Tensor dx = module.backward(state.params, state.grads, dy, ctx);
  ASSERT_TRUE(saved.empty()) << "backward left saved activations";

  const auto check = [&](const Tensor& values, const Tensor& analytic, const char* what) {
    float* v = values.data_as<float>();
    const float* g = analytic.data_as<float>();
    for (std::int64_t i = 0; i < values.numel(); ++i) {
      const float original = v[i];
      const float h = 1e-2f * std::max(1.0f, std::fabs(original));
      v[i] = original + h;
      const double plus = weighted_output_sum(module, state, input, weights, cpu_context);
      v[i] = original - h;
      const double minus = weighted_output_sum(module, state, input, weights, cpu_context);
      v[i] = original;
      const double numeric = (plus - minus) / (2.0 * double{h});
      EXPECT_NEAR(g[i], numeric, tolerance * std::max(1.0, std::fabs(numeric)))
          << what << " element " << i << " (seed " << seed << ")";
    }
  };
  for (std::size_t p = 0; p < state.params.size(); ++p)
    check(state.params[p], state.grads[p], "parameter");
  if (check_input) check(input, dx, "input");
}

}  // namespace detail

// Checks d/d(param) and d/d(input) of Σ w·module(x) against central differences, with
// random parameters (make_state) and a standard normal input.
inline void expect_gradients_match(Module& module, const Shape& input_shape, std::uint64_t seed,
                                   double tolerance = 2e-3) {
  MemoryTracker tracker(Device::cpu());
  ModuleState state = make_state(module, tracker, seed);
  Tensor input = Tensor::zeros(input_shape, DType::kF32, tracker, MemoryCategory::kActivations);
  for (std::int64_t i = 0; i < input.numel(); ++i)
    input.data_as<float>()[i] = standard_normal(seed + 1, static_cast<std::uint64_t>(i));
  detail::check_against_finite_differences(module, state, input, seed, tolerance, true);
}

// Checks only d/d(param), for the given input and parameters: for modules whose input has
// no gradient (token ids) or needs values the random generator would not give. The grads
// in `state` must start at zero; they hold the analytic gradients afterwards.
inline void expect_parameter_gradients_match(Module& module, ModuleState& state,
                                             const Tensor& input, std::uint64_t seed,
                                             double tolerance = 2e-3) {
  detail::check_against_finite_differences(module, state, input, seed, tolerance, false);
}

}  // namespace zt::nn::testing
