// The optimizers through their one tensor interface: the same Sgd/Adam objects step tensors
// on a CUDA device context (the CUDA kernels, on its compute stream) and on the CPU context
// (the CPU loop over optim::math), from the same inputs, and give the same bits; Adam's CUDA
// result is also the CPU Adam's on every vector path this CPU has (Note [One rounding sequence
// on every path] in optim/math/optimizer_math.h). f32, bf16 and f16 gradients at sizes 0, 1,
// 22 and 2^20 + 3; the one-pass step's compute-dtype copy too, with the kernel's 128-bit
// packs and without (misaligned views). Skips without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "optim/adam.h"
#include "optim/cpu_adam/cpu_adam.h"
#include "optim/sgd.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::optim {
namespace {

constexpr std::int64_t kSizes[] = {0, 1, 22, (1 << 20) + 3};
constexpr DType kGradDTypes[] = {DType::kF32, DType::kBF16, DType::kF16};
constexpr int kSteps = 3;

// Parameters, then each optimizer state, as the host sees them after kSteps steps.
using StepResult = std::vector<std::vector<float>>;

std::vector<float> initial_params(std::size_t count) { return gpu_test::inputs<float>(count, 201); }
// The gradients of `step`, rounded to `dtype` and widened back: what every path reads.
std::vector<float> step_grads(std::size_t count, int step, DType dtype) {
  std::vector<float> grads = gpu_test::inputs<float>(count, 202 + step, 0.1f);
  std::vector<std::byte> storage(count * dtype_size(dtype));
  if (count > 0) {
    convert_elements(grads.data(), DType::kF32, storage.data(), dtype, count);
    convert_elements(storage.data(), dtype, grads.data(), DType::kF32, count);
  }
  return grads;
}

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

// `optimizer` stepped kSteps times on `device` with gradients stored as `dtype`.
StepResult step_through_optimizer(const Optimizer& optimizer, float lr, DeviceContext& device,
                                  std::size_t count, DType dtype) {
  Operands operands(device, initial_params(count), optimizer.states_per_element());
  for (int step = 1; step <= kSteps; ++step) {
    const Tensor grads = operands.upload(step_grads(count, step, dtype), dtype);
    optimizer.step(operands.params, grads, operands.states, step, lr, device);
    // `grads` is freed at the end of this iteration: the step must have read it.
    device.compute_stream().synchronize();
  }
  StepResult result{operands.download(operands.params)};
  for (const Tensor& state : operands.states) result.push_back(operands.download(state));
  return result;
}

// The same Adam steps through the CPU Adam's `path` (ZeRO-Offload's host step).
StepResult step_through_cpu_adam(const Adam& adam, float lr, CpuAdamPath path, std::size_t count,
                                 DType dtype) {
  StepResult result{initial_params(count), std::vector<float>(count, 0.0f),
                    std::vector<float>(count, 0.0f)};
  for (int step = 1; step <= kSteps; ++step) {
    const std::vector<float> grads = step_grads(count, step, dtype);
    CpuAdamGroup group;
    group.params = result[0].data();
    group.grads = grads.data();
    group.exp_avg = result[1].data();
    group.exp_avg_sq = result[2].data();
    group.elements = count;
    cpu_adam_step(path, group, adam.step_scalars(step, lr));
  }
  return result;
}

// "" when every buffer of `got` is `want` bit for bit, else the first element that differs.
std::string difference(const StepResult& got, const StepResult& want) {
  if (got.size() != want.size()) return "different numbers of buffers";
  for (std::size_t b = 0; b < want.size(); ++b) {
    const char* name = b == 0 ? "parameter" : "state";
    if (got[b].size() != want[b].size()) return std::string(name) + " sizes differ";
    for (std::size_t i = 0; i < want[b].size(); ++i) {
      if (std::memcmp(&got[b][i], &want[b][i], sizeof(float)) == 0) continue;
      char text[160];
      std::snprintf(text, sizeof(text), "buffer %zu (%s) [%zu]: cuda %.9g, want %.9g", b, name, i,
                    static_cast<double>(got[b][i]), static_cast<double>(want[b][i]));
      return text;
    }
  }
  return "";
}

// Steps `optimizer` on the GPU and on the CPU from the same inputs; the results must be the
// same bits, and, for Adam, also those of every CPU Adam path this CPU has.
void expect_devices_agree(const Optimizer& optimizer, float lr) {
  const std::unique_ptr<DeviceContext> cpu = make_cpu_device_context();
  const std::unique_ptr<DeviceContext> gpu = make_device_context(Device::cuda(0));
  const auto* adam = dynamic_cast<const Adam*>(&optimizer);
  for (const std::int64_t n : kSizes) {
    for (const DType dtype : kGradDTypes) {
      SCOPED_TRACE(std::string(optimizer.name()) + ", n " + std::to_string(n) + ", gradients " +
                   std::string(dtype_name(dtype)));
      const auto count = static_cast<std::size_t>(n);
      const StepResult on_gpu = step_through_optimizer(optimizer, lr, *gpu, count, dtype);
      EXPECT_EQ(difference(on_gpu, step_through_optimizer(optimizer, lr, *cpu, count, dtype)), "")
          << "against the CPU loop";
      if (adam == nullptr) continue;
      for (const CpuAdamPath path : available_cpu_adam_paths()) {
        EXPECT_EQ(difference(on_gpu, step_through_cpu_adam(*adam, lr, path, count, dtype)), "")
            << "against the CPU Adam's " << cpu_adam_path_name(path) << " path";
      }
    }
  }
}

TEST(OptimizerDevice, SgdOnCudaTensorsIsTheCpuOptimizerBitForBit) {
  ZT_SKIP_WITHOUT_GPU();
  expect_devices_agree(Sgd(0.0f, false, 0.0f), 0.05f);
  expect_devices_agree(Sgd(0.9f, false, 0.01f), 0.05f);
  expect_devices_agree(Sgd(0.9f, true, 0.01f), 0.05f);
}

TEST(OptimizerDevice, AdamAndAdamWOnCudaTensorsAreEveryCpuPathBitForBit) {
  ZT_SKIP_WITHOUT_GPU();
  expect_devices_agree(Adam(0.9f, 0.999f, 1e-8f, 0.1f, false), 1e-3f);
  expect_devices_agree(Adam(0.9f, 0.999f, 1e-8f, 0.1f, true), 1e-3f);
}

// Note [The optimizer in one pass]: the step also writes the compute-dtype parameters. Steps
// `optimizer` kSteps times over views starting `offset` elements into their buffers (1: no
// operand is 16-byte aligned, so the kernel takes every element one at a time), with
// gradients stored as `grad_dtype` and a `compute_dtype` copy; returns the master, the states
// and the copy widened to f32 (exact).
StepResult step_with_compute_copy(const Optimizer& optimizer, float lr, DeviceContext& device,
                                  std::size_t count, DType grad_dtype, DType compute_dtype,
                                  std::int64_t offset) {
  const auto n = static_cast<std::int64_t>(count);
  const auto room = static_cast<std::size_t>(offset);
  const auto view = [&](const Tensor& buffer) { return buffer.view(offset, Shape{n}); };
  std::vector<float> initial(room, 0.0f);
  const std::vector<float> params = initial_params(count);
  initial.insert(initial.end(), params.begin(), params.end());
  Operands operands(device, initial, optimizer.states_per_element());
  std::vector<Tensor> states;
  for (const Tensor& state : operands.states) states.push_back(view(state));
  const Tensor compute = operands.upload(std::vector<float>(count + room, 0.0f), compute_dtype);
  for (int step = 1; step <= kSteps; ++step) {
    std::vector<float> grads(room, 0.0f);
    const std::vector<float> values = step_grads(count, step, grad_dtype);
    grads.insert(grads.end(), values.begin(), values.end());
    const Tensor on_device = operands.upload(grads, grad_dtype);
    optimizer.step(view(operands.params), view(on_device), states, view(compute), step, lr, device);
    device.compute_stream().synchronize();  // `on_device` dies at the end of the iteration
  }
  StepResult result{operands.download(view(operands.params))};
  for (const Tensor& state : states) result.push_back(operands.download(state));
  std::vector<std::byte> bytes(count * dtype_size(compute_dtype));
  if (count > 0) {
    device.ops().copy(view(compute), Tensor::wrap(bytes.data(), Shape{n}, compute_dtype));
    device.compute_stream().synchronize();
  }
  std::vector<float> widened(count);
  if (count > 0) {
    convert_elements(bytes.data(), compute_dtype, widened.data(), DType::kF32, count);
  }
  result.push_back(widened);
  return result;
}

TEST(OptimizerDevice, OnePassStepsWriteTheCpuComputeCopyBitForBit) {
  ZT_SKIP_WITHOUT_GPU();
  const std::unique_ptr<DeviceContext> cpu = make_cpu_device_context();
  const std::unique_ptr<DeviceContext> gpu = make_device_context(Device::cuda(0));
  const Sgd sgd(0.0f, false, 0.01f);
  const Sgd momentum(0.9f, true, 0.01f);
  const Adam adam(0.9f, 0.999f, 1e-8f, 0.1f, false);
  const Adam adamw(0.9f, 0.999f, 1e-8f, 0.1f, true);
  for (const Optimizer* optimizer :
       {static_cast<const Optimizer*>(&sgd), static_cast<const Optimizer*>(&momentum),
        static_cast<const Optimizer*>(&adam), static_cast<const Optimizer*>(&adamw)}) {
    for (const std::int64_t n : kSizes) {
      for (const DType grad_dtype : kGradDTypes) {
        for (const DType compute_dtype : {DType::kBF16, DType::kF16}) {
          for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{1}}) {
            SCOPED_TRACE(std::string(optimizer->name()) + ", n " + std::to_string(n) +
                         ", gradients " + std::string(dtype_name(grad_dtype)) + ", copy " +
                         std::string(dtype_name(compute_dtype)) + ", offset " +
                         std::to_string(offset));
            const auto count = static_cast<std::size_t>(n);
            const float lr = optimizer == &sgd || optimizer == &momentum ? 0.05f : 1e-3f;
            EXPECT_EQ(difference(step_with_compute_copy(*optimizer, lr, *gpu, count, grad_dtype,
                                                        compute_dtype, offset),
                                 step_with_compute_copy(*optimizer, lr, *cpu, count, grad_dtype,
                                                        compute_dtype, offset)),
                      "");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace zt::optim
