// The optimizers through their one tensor interface: the same Sgd/Adam objects step tensors
// on a CUDA device context (the CUDA kernels, on its compute stream) and on the CPU context
// (the CPU loop), from the same inputs, and agree within the FMA contraction nvcc applies.
// f32, bf16 and f16 gradients at sizes 0, 1, 22 and 2^20 + 3. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::optim {
namespace {

using gpu_test::all_near;

constexpr std::int64_t kSizes[] = {0, 1, 22, (1 << 20) + 3};
constexpr DType kGradDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
constexpr int kSteps = 3;
constexpr double kRel = 1e-5;
constexpr double kAbs = 1e-6;

// One set of optimizer operands (params, states) on one device context.
struct Operands {
  DeviceContext& device;
  Tensor params;
  std::vector<Tensor> states;

  Operands(DeviceContext& context, const std::vector<float>& initial, int state_count)
      : device(context) {
    params = upload(initial);
    for (int i = 0; i < state_count; ++i) {
      states.push_back(upload(std::vector<float>(initial.size(), 0.0f)));
    }
  }
  // A tensor on this device holding `values` rounded to `dtype`.
  Tensor upload(const std::vector<float>& values, DType dtype = DType::kF32) {
    const Shape shape{static_cast<std::int64_t>(values.size())};
    std::vector<std::byte> host(values.size() * dtype_size(dtype));
    if (!values.empty()) {
      convert_elements(values.data(), DType::kF32, host.data(), dtype, values.size());
    }
    Tensor on_device = Tensor::empty(shape, dtype, device.tracker(), MemoryCategory::kWorkspace);
    device.ops().copy(Tensor::wrap(host.data(), shape, dtype), on_device);
    device.compute_stream().synchronize();  // `host` dies on return
    return on_device;
  }
  std::vector<float> download(const Tensor& tensor) {
    std::vector<float> values(static_cast<std::size_t>(tensor.numel()));
    device.ops().copy(tensor, Tensor::wrap(values.data(), tensor.shape(), DType::kF32));
    device.compute_stream().synchronize();
    return values;
  }
};

// Steps `optimizer` kSteps times on the CPU and on the GPU from the same inputs and compares.
void expect_devices_agree(const Optimizer& optimizer, float lr) {
  const std::unique_ptr<DeviceContext> cpu = make_cpu_device_context();
  const std::unique_ptr<DeviceContext> gpu = make_device_context(Device::cuda(0));
  for (const std::int64_t n : kSizes) {
    for (const DType dtype : kGradDTypes) {
      SCOPED_TRACE(std::string(optimizer.name()) + ", n " + std::to_string(n) + ", gradients " +
                   std::string(dtype_name(dtype)));
      const auto count = static_cast<std::size_t>(n);
      const std::vector<float> initial = gpu_test::inputs<float>(count, 201);
      Operands on_cpu(*cpu, initial, optimizer.states_per_element());
      Operands on_gpu(*gpu, initial, optimizer.states_per_element());
      for (int step = 1; step <= kSteps; ++step) {
        const std::vector<float> grads = gpu_test::inputs<float>(count, 202 + step, 0.1f);
        const Tensor cpu_grads = on_cpu.upload(grads, dtype);
        const Tensor gpu_grads = on_gpu.upload(grads, dtype);
        optimizer.step(on_cpu.params, cpu_grads, on_cpu.states, step, lr, *cpu);
        optimizer.step(on_gpu.params, gpu_grads, on_gpu.states, step, lr, *gpu);
        // gpu_grads is freed at the end of this iteration: the step must have read it.
        gpu->compute_stream().synchronize();
      }
      EXPECT_TRUE(
          all_near(on_gpu.download(on_gpu.params), on_cpu.download(on_cpu.params), kRel, kAbs))
          << "parameters";
      for (std::size_t i = 0; i < on_cpu.states.size(); ++i) {
        EXPECT_TRUE(all_near(on_gpu.download(on_gpu.states[i]), on_cpu.download(on_cpu.states[i]),
                             kRel, 1e-8))
            << "state " << i;
      }
    }
  }
}

TEST(OptimizerDevice, SgdOnCudaTensorsMatchesTheCpuOptimizer) {
  ZT_SKIP_WITHOUT_GPU();
  expect_devices_agree(Sgd(0.0f, false, 0.0f), 0.05f);
  expect_devices_agree(Sgd(0.9f, false, 0.01f), 0.05f);
  expect_devices_agree(Sgd(0.9f, true, 0.01f), 0.05f);
}

TEST(OptimizerDevice, AdamAndAdamWOnCudaTensorsMatchTheCpuOptimizer) {
  ZT_SKIP_WITHOUT_GPU();
  expect_devices_agree(Adam(0.9f, 0.999f, 1e-8f, 0.1f, false), 1e-3f);
  expect_devices_agree(Adam(0.9f, 0.999f, 1e-8f, 0.1f, true), 1e-3f);
}

}  // namespace
}  // namespace zt::optim
