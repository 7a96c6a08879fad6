// Optimizers against closed-form updates computed in double precision, through the tensor
// interface on a CPU device context.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/device/device_context.h"
#include "optim/adam.h"
#include "optim/sgd.h"

namespace zt::optim {
namespace {

Tensor host_tensor(std::vector<float>& values) {
  return Tensor::wrap(values.data(), Shape{static_cast<std::int64_t>(values.size())}, DType::kF32);
}

TEST(Sgd, PlainStepIsLrTimesGradient) {
  const auto device = make_cpu_device_context();
  Sgd sgd(0.0f, false, 0.0f);
  EXPECT_EQ(sgd.states_per_element(), 0);
  std::vector<float> p{1.0f, -2.0f};
  std::vector<float> g{0.5f, 0.25f};
  sgd.step(host_tensor(p), host_tensor(g), {}, 1, 0.1f, *device);
  EXPECT_FLOAT_EQ(p[0], 0.95f);
  EXPECT_FLOAT_EQ(p[1], -2.025f);
}

TEST(Sgd, MomentumAndNesterovFollowPyTorch) {
  const auto device = make_cpu_device_context();
  for (bool nesterov : {false, true}) {
    Sgd sgd(0.9f, nesterov, 0.1f);
    std::vector<float> p{1.0f};
    std::vector<float> buf{0.0f};
    const std::vector<Tensor> states{host_tensor(buf)};
    double rp = 1.0, rbuf = 0.0;
    for (int t = 1; t <= 5; ++t) {
      const double grad = 0.3 * t;
      std::vector<float> g{static_cast<float>(grad)};
      sgd.step(host_tensor(p), host_tensor(g), states, t, 0.05f, *device);
      const double gd = grad + 0.1 * rp;
      rbuf = 0.9 * rbuf + gd;
      rp -= 0.05 * (nesterov ? gd + 0.9 * rbuf : rbuf);
    }
    EXPECT_NEAR(p[0], rp, 1e-6) << "nesterov " << nesterov;
  }
}

double adam_reference(bool decoupled, int steps, std::vector<double>* moments) {
  double p = 0.5, m = 0.0, v = 0.0;
  const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.1;
  for (int t = 1; t <= steps; ++t) {
    double g = std::sin(t) + 0.2;
    if (decoupled) {
      p -= lr * wd * p;
    } else {
      g += wd * p;
    }
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double mh = m / (1 - std::pow(b1, t));
    const double vh = v / (1 - std::pow(b2, t));
    p -= lr * mh / (std::sqrt(vh) + eps);
  }
  *moments = {m, v};
  return p;
}

TEST(Adam, AdamAndAdamWMatchClosedFormWithBiasCorrection) {
  const auto device = make_cpu_device_context();
  for (bool decoupled : {false, true}) {
    Adam adam(0.9f, 0.99f, 1e-8f, 0.1f, decoupled);
    EXPECT_EQ(adam.name(), decoupled ? "adamw" : "adam");
    std::vector<float> p{0.5f}, m{0.0f}, v{0.0f};
    const std::vector<Tensor> states{host_tensor(m), host_tensor(v)};
    for (int t = 1; t <= 10; ++t) {
      std::vector<float> g{static_cast<float>(std::sin(t) + 0.2)};
      adam.step(host_tensor(p), host_tensor(g), states, t, 0.01f, *device);
    }
    std::vector<double> moments;
    EXPECT_NEAR(p[0], adam_reference(decoupled, 10, &moments), 1e-5) << "decoupled " << decoupled;
    EXPECT_NEAR(m[0], moments[0], 1e-5);
    EXPECT_NEAR(v[0], moments[1], 1e-6);
  }
}

TEST(Adam, FirstStepMovesEveryParameterByAboutLr) {
  // With bias correction the first update is lr · g/|g| (up to eps), whatever g's scale.
  const auto device = make_cpu_device_context();
  Adam adam(0.9f, 0.999f, 1e-8f, 0.0f, true);
  std::vector<float> p(22, 0.0f), m(22, 0.0f), v(22, 0.0f), g(22);
  for (std::size_t i = 0; i < g.size(); ++i)
    g[i] = (i % 2 ? 1.0f : -1.0f) * std::pow(10.0f, static_cast<float>(i % 5) - 2);
  const std::vector<Tensor> states{host_tensor(m), host_tensor(v)};
  adam.step(host_tensor(p), host_tensor(g), states, 1, 0.001f, *device);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], g[i] > 0 ? -0.001f : 0.001f, 1e-6);
}

TEST(Adam, ZeroLengthTensorsAreFine) {
  const auto device = make_cpu_device_context();
  Adam adam(0.9f, 0.999f, 1e-8f, 0.0f, true);
  std::vector<float> empty;
  const std::vector<Tensor> states{host_tensor(empty), host_tensor(empty)};
  EXPECT_NO_THROW(adam.step(host_tensor(empty), host_tensor(empty), states, 1, 0.1f, *device));
}

TEST(Optimizer, MismatchedOperandsAreRefusedBeforeAnyUpdate) {
  const auto device = make_cpu_device_context();
  Adam adam(0.9f, 0.999f, 1e-8f, 0.0f, true);
  std::vector<float> p{1.0f, 2.0f}, g{1.0f, 1.0f}, short_g{1.0f}, m(2), v(2);
  const std::vector<float> before = p;
  const std::vector<Tensor> states{host_tensor(m), host_tensor(v)};
  EXPECT_THROW(adam.step(host_tensor(p), host_tensor(short_g), states, 1, 0.1f, *device),
               InternalError);
  EXPECT_THROW(
      adam.step(host_tensor(p), host_tensor(g), std::span(states).first(1), 1, 0.1f, *device),
      InternalError);
  // A tensor that claims to live on a GPU is never stepped by the CPU context.
  const Tensor on_gpu = Tensor::wrap(g.data(), Shape{2}, DType::kF32, Device::cuda(0));
  EXPECT_THROW(adam.step(host_tensor(p), on_gpu, states, 1, 0.1f, *device), InternalError);
  EXPECT_EQ(p, before);
}

}  // namespace
}  // namespace zt::optim
