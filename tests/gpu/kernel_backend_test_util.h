// The CPU and CUDA kernel backends side by side for the backend comparison tests: one context
// per device, host tensors from seeded values, copies to and from the GPU, and comparison of
// a CPU result with a GPU one. Tolerances: f32 results differ only by summation order;
// bf16 results may be one or two bf16 roundings apart (the CUDA Linear rounds its GEMM and
// then its bias add; the CPU rounds once).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/device/device_context.h"
#include "core/random.h"
#include "nn/kernels/kernel_backend.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::gpu_test {

struct Tolerance {
  double rel;
  double abs;
};
inline Tolerance tolerance_for(DType dtype) {
  return dtype == DType::kF32 ? Tolerance{2e-5, 2e-5} : Tolerance{1.0 / 32, 2e-2};
}

inline std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info) {
  return std::string(dtype_name(info.param));
}

class BackendPair : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    ZT_SKIP_WITHOUT_GPU();
    gpu_ = make_device_context(Device::cuda(0));
  }

  DType dtype() const { return GetParam(); }
  DeviceContext& cpu() { return *cpu_; }
  DeviceContext& gpu() { return *gpu_; }
  const nn::KernelBackend& cpu_kernels() const { return nn::kernel_backend_for(Device::cpu()); }
  const nn::KernelBackend& gpu_kernels() const { return nn::kernel_backend_for(gpu_->device()); }

  // A host tensor of `shape` with seeded normal values times `scale`, in `dtype`.
  Tensor host(const Shape& shape, DType dtype, std::uint64_t key, float scale = 1.0f) {
    Tensor t = Tensor::zeros(shape, dtype, host_tracker_, MemoryCategory::kActivations);
    std::vector<float> values(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * standard_normal(key, i);
    convert_elements(values.data(), DType::kF32, t.data(), dtype, values.size());
    return t;
  }
  Tensor host_zeros(const Shape& shape, DType dtype) {
    return Tensor::zeros(shape, dtype, host_tracker_, MemoryCategory::kActivations);
  }
  Tensor host_ids(const Shape& shape, std::int64_t vocab, std::uint64_t key) {
    Tensor t = host_zeros(shape, DType::kI32);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      t.data_as<std::int32_t>()[i] =
          static_cast<std::int32_t>(mix64(key + static_cast<std::uint64_t>(i)) % vocab);
    }
    return t;
  }
  // A GPU copy of a host tensor.
  Tensor to_gpu(const Tensor& host_tensor) {
    Tensor d = Tensor::empty(host_tensor.shape(), host_tensor.dtype(), gpu_->tracker(),
                             MemoryCategory::kActivations);
    gpu_->ops().copy(host_tensor, d);
    return d;
  }
  // The values of a host or GPU tensor, widened to f32.
  std::vector<float> floats(const Tensor& t) {
    Tensor h = t;
    if (t.device().kind == DeviceKind::kCuda) {
      h = Tensor::empty(t.shape(), t.dtype(), host_tracker_, MemoryCategory::kActivations);
      gpu_->ops().copy(t, h);
      gpu_->synchronize();
    }
    std::vector<float> values(static_cast<std::size_t>(h.numel()));
    convert_elements(h.data(), h.dtype(), values.data(), DType::kF32, values.size());
    return values;
  }
  // The GPU result against the CPU one, within the tolerance of `dtype`.
  void expect_same(const Tensor& on_cpu, const Tensor& on_gpu, DType dtype, const char* what) {
    const Tolerance tol = tolerance_for(dtype);
    EXPECT_TRUE(all_near(floats(on_gpu), floats(on_cpu), tol.rel, tol.abs)) << what;
  }

  MemoryTracker host_tracker_{Device::cpu()};
  std::unique_ptr<DeviceContext> cpu_ = make_cpu_device_context(host_tracker_);
  std::unique_ptr<DeviceContext> gpu_;
};

}  // namespace zt::gpu_test
