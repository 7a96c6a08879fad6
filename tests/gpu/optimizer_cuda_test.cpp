// CUDA SGD and Adam/AdamW steps (f32 and bf16 gradients) against the CPU loop over the same
// optim::math functions on the same shards, at sizes 0, 1, 22 and 2^20 + 3. Skips without a
// GPU.
#include "optim/cuda/optimizer_cuda.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "optim/math/optimizer_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::optim {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

constexpr std::int64_t kSizes[] = {0, 1, 22, (1 << 20) + 3};
constexpr int kSteps = 3;
// nvcc contracts a*b+c into FMAs; the host does not: a few f32 ulps per step.
constexpr double kRel = 1e-5;
constexpr double kAbs = 1e-6;

template <typename G>
class OptimizerCuda : public ::testing::Test {};
TYPED_TEST_SUITE(OptimizerCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

struct SgdCase {
  float momentum;
  float weight_decay;
  bool nesterov;
};

TYPED_TEST(OptimizerCuda, SgdStepsMatchCpuLoop) {
  ZT_SKIP_WITHOUT_GPU();
  using G = TypeParam;
  constexpr float kLr = 0.05f;
  for (const SgdCase c :
       {SgdCase{0.0f, 0.0f, false}, SgdCase{0.9f, 0.01f, false}, SgdCase{0.9f, 0.01f, true}}) {
    for (const std::int64_t n : kSizes) {
      SCOPED_TRACE("n " + std::to_string(n) + " momentum " + std::to_string(c.momentum) +
                   (c.nesterov ? " nesterov" : ""));
      const auto count = static_cast<std::size_t>(n);
      std::vector<float> params = gpu_test::inputs<float>(count, 91);
      std::vector<float> buffer(count, 0.0f);
      DeviceBuffer<float> p_dev(params), buf_dev(buffer);
      for (int step = 0; step < kSteps; ++step) {
        const std::vector<float> grads = gpu_test::inputs<G>(count, 92 + step);
        for (std::size_t i = 0; i < count; ++i) {
          math::sgd_update(params[i], grads[i], buffer[i], kLr, c.momentum, c.weight_decay,
                           c.nesterov);
        }
        DeviceBuffer<G> g_dev(gpu_test::to_storage<G>(grads));
        // Without momentum there is no buffer, as the API allows.
        cuda::sgd_step(p_dev.get(), g_dev.get(), c.momentum == 0.0f ? nullptr : buf_dev.get(),
                       static_cast<float*>(nullptr), n, kLr, c.momentum, c.weight_decay, c.nesterov,
                       nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // g_dev dies at the end of the step
      }
      EXPECT_TRUE(all_near(p_dev.download(), params, kRel, kAbs)) << "params";
      EXPECT_TRUE(all_near(buf_dev.download(), buffer, kRel, kAbs)) << "momentum buffer";
    }
  }
}

TYPED_TEST(OptimizerCuda, AdamAndAdamWStepsMatchCpuLoop) {
  ZT_SKIP_WITHOUT_GPU();
  using G = TypeParam;
  for (const bool decoupled : {false, true}) {
    for (const std::int64_t n : kSizes) {
      SCOPED_TRACE("n " + std::to_string(n) + (decoupled ? " AdamW" : " Adam"));
      const auto count = static_cast<std::size_t>(n);
      std::vector<float> params = gpu_test::inputs<float>(count, 101);
      std::vector<float> m(count, 0.0f), v(count, 0.0f);
      DeviceBuffer<float> p_dev(params), m_dev(m), v_dev(v);
      for (int step = 1; step <= kSteps; ++step) {
        const math::AdamStepScalars s{1e-3f,
                                      0.9f,
                                      0.999f,
                                      1e-8f,
                                      0.1f,
                                      1.0f - std::pow(0.9f, static_cast<float>(step)),
                                      1.0f - std::pow(0.999f, static_cast<float>(step)),
                                      decoupled};
        const std::vector<float> grads = gpu_test::inputs<G>(count, 102 + step, 0.1f);
        for (std::size_t i = 0; i < count; ++i)
          math::adam_update(params[i], grads[i], m[i], v[i], s);
        DeviceBuffer<G> g_dev(gpu_test::to_storage<G>(grads));
        cuda::adam_step(p_dev.get(), g_dev.get(), m_dev.get(), v_dev.get(),
                        static_cast<float*>(nullptr), n, s, nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
      EXPECT_TRUE(all_near(p_dev.download(), params, kRel, kAbs)) << "params";
      EXPECT_TRUE(all_near(m_dev.download(), m, kRel, 1e-8)) << "m";
      EXPECT_TRUE(all_near(v_dev.download(), v, kRel, 1e-10)) << "v";
    }
  }
}

}  // namespace
}  // namespace zt::optim
