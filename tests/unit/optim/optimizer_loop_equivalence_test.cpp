// The optimizers through the tensor interface on the CPU give bitwise what the plain loop
// over optim::math gives (the update as the strategies made it before it went through
// tensors), for f32, bf16 and f16 gradients at sizes 0, 1, 22 and 2^20 + 3 (chunk edges).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/random.h"
#include "optim/adam.h"
#include "optim/math/optimizer_math.h"
#include "optim/sgd.h"

namespace zt::optim {
namespace {

constexpr std::int64_t kSizes[] = {0, 1, 22, (std::int64_t{1} << 20) + 3};
constexpr DType kGradDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
constexpr int kSteps = 3;

std::vector<float> seeded(std::size_t n, std::uint64_t key, float scale) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = scale * standard_normal(key, i);
  return values;
}

Tensor host_tensor(void* data, std::size_t n, DType dtype) {
  return Tensor::wrap(data, Shape{static_cast<std::int64_t>(n)}, dtype);
}

// `values` rounded into `dtype` storage (bytes), and what that storage widens back to.
struct Gradients {
  std::vector<std::byte> storage;
  std::vector<float> widened;
  Gradients(const std::vector<float>& values, DType dtype)
      : storage(values.size() * dtype_size(dtype)), widened(values.size()) {
    if (values.empty()) return;
    convert_elements(values.data(), DType::kF32, storage.data(), dtype, values.size());
    convert_elements(storage.data(), dtype, widened.data(), DType::kF32, values.size());
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // Empty vectors may have null data, which memcmp must not be given (UBSan).
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::string trace(std::int64_t n, DType dtype) {
  return "n " + std::to_string(n) + ", gradients " + std::string(dtype_name(dtype));
}

TEST(OptimizerLoopEquivalence, SgdStepsAreBitwiseTheElementLoop) {
  const auto device = make_cpu_device_context();
  struct Case {
    float momentum;
    bool nesterov;
  };
  constexpr float kLr = 0.05f;
  constexpr float kWeightDecay = 0.01f;
  for (const Case c : {Case{0.0f, false}, Case{0.9f, false}, Case{0.9f, true}}) {
    const Sgd sgd(c.momentum, c.nesterov, kWeightDecay);
    for (const std::int64_t n : kSizes) {
      for (const DType dtype : kGradDTypes) {
        SCOPED_TRACE(trace(n, dtype) + ", momentum " + std::to_string(c.momentum));
        const auto count = static_cast<std::size_t>(n);
        std::vector<float> params = seeded(count, 7, 1.0f);
        std::vector<float> buffer(count, 0.0f);
        std::vector<float> want_params = params;
        std::vector<float> want_buffer = buffer;
        std::vector<Tensor> states;
        if (sgd.states_per_element() == 1)
          states.push_back(host_tensor(buffer.data(), count, DType::kF32));
        for (int step = 1; step <= kSteps; ++step) {
          Gradients grads(seeded(count, 8 + step, 0.5f), dtype);
          float unused = 0.0f;
          for (std::size_t i = 0; i < count; ++i) {
            float& b = c.momentum == 0.0f ? unused : want_buffer[i];
            math::sgd_update(want_params[i], grads.widened[i], b, kLr, c.momentum, kWeightDecay,
                             c.nesterov);
          }
          sgd.step(host_tensor(params.data(), count, DType::kF32),
                   host_tensor(grads.storage.data(), count, dtype), states, step, kLr, *device);
        }
        EXPECT_TRUE(same_bits(params, want_params)) << "parameters";
        EXPECT_TRUE(same_bits(buffer, want_buffer)) << "momentum buffer";
      }
    }
  }
}

TEST(OptimizerLoopEquivalence, AdamAndAdamWStepsAreBitwiseTheElementLoop) {
  const auto device = make_cpu_device_context();
  constexpr float kLr = 1e-3f;
  for (const bool decoupled : {false, true}) {
    const Adam adam(0.9f, 0.999f, 1e-8f, 0.1f, decoupled);
    for (const std::int64_t n : kSizes) {
      for (const DType dtype : kGradDTypes) {
        SCOPED_TRACE(trace(n, dtype) + (decoupled ? ", AdamW" : ", Adam"));
        const auto count = static_cast<std::size_t>(n);
        std::vector<float> params = seeded(count, 17, 1.0f);
        std::vector<float> m(count, 0.0f), v(count, 0.0f);
        std::vector<float> want_params = params, want_m = m, want_v = v;
        const std::vector<Tensor> states{host_tensor(m.data(), count, DType::kF32),
                                         host_tensor(v.data(), count, DType::kF32)};
        for (int step = 1; step <= kSteps; ++step) {
          Gradients grads(seeded(count, 18 + step, 0.1f), dtype);
          // The scalars as the optimizer has always formed them: bias corrections in double.
          const math::AdamStepScalars s{
              kLr,
              0.9f,
              0.999f,
              1e-8f,
              0.1f,
              static_cast<float>(1.0 - std::pow(double{0.9f}, static_cast<double>(step))),
              static_cast<float>(1.0 - std::pow(double{0.999f}, static_cast<double>(step))),
              decoupled};
          for (std::size_t i = 0; i < count; ++i) {
            math::adam_update(want_params[i], grads.widened[i], want_m[i], want_v[i], s);
          }
          adam.step(host_tensor(params.data(), count, DType::kF32),
                    host_tensor(grads.storage.data(), count, dtype), states, step, kLr, *device);
        }
        EXPECT_TRUE(same_bits(params, want_params)) << "parameters";
        EXPECT_TRUE(same_bits(m, want_m)) << "m";
        EXPECT_TRUE(same_bits(v, want_v)) << "v";
      }
    }
  }
}

}  // namespace
}  // namespace zt::optim
