// Runs a module in bf16/f16 and in f32 on the same (representable) inputs and compares the
// two: the error bounds, in units of the format's unit roundoff, are argued in each test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "cpu_test_context.h"
#include "nn/module.h"

namespace zt::nn::testing {

// Note [Unit roundoff]: one round-to-nearest-even of a normal number x into a format with p
// significand bits errs by at most half an ulp, |round(x) - x| <= 2^-p |x| = u |x|:
// bf16 has p = 8 (u = 2^-8), f16 p = 11 (u = 2^-11). f16 denormals (|x| < 2^-14) err by at
// most half their fixed ulp 2^-24, an absolute 2^-25; bf16 shares f32's exponent range.
inline double unit_roundoff(DType dtype) {
  return dtype == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}
inline double denormal_error(DType dtype) {
  return dtype == DType::kF16 ? std::ldexp(1.0, -25) : 0.0;
}

// Names a test instantiated over dtypes by the dtype ("bf16", "f16").
inline std::string dtype_test_name(const ::testing::TestParamInfo<DType>& param_info) {
  return std::string(dtype_name(param_info.param));
}

// x rounded to `dtype` and widened back: the f32 value a bf16/f16 tensor would hold.
inline float representable(float x, DType dtype) {
  if (dtype == DType::kBF16) return static_cast<float>(BF16(x));
  if (dtype == DType::kF16) return static_cast<float>(F16(x));
  return x;
}

// `count` values scale * N(0, 1) from stream `seed`, each representable in `dtype`, so the
// f32 and the low-precision run start from exactly the same numbers.
inline std::vector<float> random_values(std::int64_t count, std::uint64_t seed, DType dtype,
                                        float scale = 1.0f) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = representable(scale * standard_normal(seed, i), dtype);
  }
  return values;
}

inline Tensor make_tensor(const std::vector<float>& values, const Shape& shape, DType dtype,
                          MemoryTracker& tracker, MemoryCategory category) {
  Tensor t = Tensor::zeros(shape, dtype, tracker, category);
  convert_elements(values.data(), DType::kF32, t.data(), dtype, values.size());
  return t;
}

inline std::vector<float> to_floats(const Tensor& t) {
  std::vector<float> values(static_cast<std::size_t>(t.numel()));
  convert_elements(t.data(), t.dtype(), values.data(), DType::kF32, values.size());
  return values;
}

// Inputs of one comparison, all f32 values representable in the low-precision dtype.
struct PrecisionCase {
  std::vector<std::vector<float>> params;  // in parameter_specs() order
  std::vector<float> input;                // ignored when ids is defined
  Shape input_shape;
  Tensor ids;  // i32 token ids for Embedding, else undefined
  std::vector<float> grad_output;
};

inline PrecisionCase random_case(const Module& module, const Shape& input_shape,
                                 std::int64_t output_numel, std::uint64_t seed, DType dtype) {
  PrecisionCase c;
  std::uint64_t stream = seed * 16;
  for (const auto& spec : module.parameter_specs()) {
    c.params.push_back(random_values(spec.shape.numel(), stream++, dtype, 0.5f));
  }
  c.input = random_values(input_shape.numel(), stream++, dtype);
  c.input_shape = input_shape;
  c.grad_output = random_values(output_numel, stream++, dtype);
  return c;
}

// What one forward + backward in one dtype produced, widened to f32.
struct PrecisionRun {
  std::vector<float> output;              // of the last pass
  std::vector<float> grad_input;          // of the last pass; empty for Embedding
  std::vector<std::vector<float>> grads;  // the f32 gradients after every pass
  std::int64_t workspace_peak_bytes = 0;
};

// Runs forward then backward once per pass, with params, input and dL/dy in `dtype`, into
// one set of f32 gradients that start at zero (so a second pass accumulates onto the first).
// Checks the dtype contract on the way and that every call frees its workspace scratch.
inline PrecisionRun run_in_dtype(Module& module, DType dtype,
                                 const std::vector<PrecisionCase>& passes) {
  MemoryTracker tracker(Device::cpu());
  std::vector<Tensor> grads;
  for (const auto& spec : module.parameter_specs()) {
    grads.push_back(Tensor::zeros(spec.shape, DType::kF32, tracker, MemoryCategory::kGradients));
  }
  PrecisionRun run;
  for (const PrecisionCase& c : passes) {
    std::vector<Tensor> params;
    for (std::size_t p = 0; p < grads.size(); ++p) {
      params.push_back(
          make_tensor(c.params[p], grads[p].shape(), dtype, tracker, MemoryCategory::kParameters));
    }
    const Tensor input = c.ids.defined() ? c.ids
                                         : make_tensor(c.input, c.input_shape, dtype, tracker,
                                                       MemoryCategory::kActivations);
    SavedActivations saved;
    testing::CpuTestContext cpu_context(tracker);
    ModuleContext ctx = cpu_context.module(saved);
    const Tensor y = module.forward(params, input, ctx);
    EXPECT_EQ(y.dtype(), dtype) << "forward output dtype";
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0) << "forward kept scratch";
    run.output = to_floats(y);
    const Tensor dy =
        make_tensor(c.grad_output, y.shape(), dtype, tracker, MemoryCategory::kActivations);
    const Tensor dx = module.backward(params, grads, dy, ctx);
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kWorkspace), 0) << "backward kept scratch";
    EXPECT_TRUE(saved.empty()) << "backward left saved activations";
    run.grad_input.clear();
    if (dx.defined()) {
      EXPECT_EQ(dx.dtype(), dtype) << "grad_input dtype";
      run.grad_input = to_floats(dx);
    }
  }
  for (const Tensor& g : grads) run.grads.push_back(to_floats(g));
  run.workspace_peak_bytes = tracker.peak_bytes(MemoryCategory::kWorkspace);
  return run;
}

inline PrecisionRun run_in_dtype(Module& module, DType dtype, const PrecisionCase& c) {
  return run_in_dtype(module, dtype, std::vector<PrecisionCase>{c});
}

// |low - ref| <= bound[i], element by element.
inline void expect_within(const std::vector<float>& low, const std::vector<float>& ref,
                          const std::vector<double>& bound, const std::string& what) {
  ASSERT_EQ(low.size(), ref.size()) << what;
  ASSERT_EQ(bound.size(), ref.size()) << what;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_LE(std::fabs(double{low[i]} - ref[i]), bound[i])
        << what << " element " << i << ": " << low[i] << " vs f32 " << ref[i];
  }
}

// |low - ref| <= roundings * u * |ref| + roundings * denormal_error, element by element: for
// results the low-precision path computes exactly as f32 does and rounds `roundings` times.
inline void expect_within_roundings(const std::vector<float>& low, const std::vector<float>& ref,
                                    double roundings, DType dtype, const std::string& what) {
  ASSERT_EQ(low.size(), ref.size()) << what;
  const double u = unit_roundoff(dtype);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double bound = roundings * (u * std::fabs(double{ref[i]}) + denormal_error(dtype));
    ASSERT_LE(std::fabs(double{low[i]} - ref[i]), bound)
        << what << " element " << i << ": " << low[i] << " vs f32 " << ref[i];
  }
}

// max |low - ref| <= tolerance * max |ref|: for results whose intermediates were rounded.
inline void expect_normwise_close(const std::vector<float>& low, const std::vector<float>& ref,
                                  double tolerance, const std::string& what) {
  ASSERT_EQ(low.size(), ref.size()) << what;
  double max_ref = 0.0;
  double max_error = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double{ref[i]}));
    max_error = std::max(max_error, std::fabs(double{low[i]} - ref[i]));
  }
  EXPECT_LE(max_error, tolerance * max_ref)
      << what << ": max error " << max_error << " over max |f32| " << max_ref << " = "
      << max_error / max_ref << " relative";
}

// The same bits: the low-precision path fed f32 arithmetic exactly the f32 path's numbers.
inline void expect_bitwise_equal(const std::vector<float>& low, const std::vector<float>& ref,
                                 const std::string& what) {
  ASSERT_EQ(low.size(), ref.size()) << what;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(low[i], ref[i]) << what << " element " << i;
  }
}

}  // namespace zt::nn::testing
