// What the communicator GPU tests share: a CUDA device context (skipping when this build or
// machine cannot make one), and f32 values moved to and from device tensors of any dtype.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/device/device_context.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace zt::gpu_test {

// A device tensor holding `values` rounded to `dtype` (copied on the compute stream).
inline Tensor to_device(DeviceContext& device, const std::vector<float>& values, DType dtype) {
  const auto count = static_cast<std::int64_t>(values.size());
  Tensor on_device =
      Tensor::empty(Shape{count}, dtype, device.tracker(), MemoryCategory::kWorkspace);
  std::vector<std::byte> host(values.size() * dtype_size(dtype) + 1);
  convert_elements(values.data(), DType::kF32, host.data(), dtype, values.size());
  device.ops().copy(Tensor::wrap(host.data(), Shape{count}, dtype), on_device);
  device.compute_stream().synchronize();  // `host` dies here
  return on_device;
}

// `tensor`'s values as f32, read after everything on the compute stream so far.
inline std::vector<float> to_host(DeviceContext& device, const Tensor& tensor) {
  std::vector<std::byte> host(tensor.nbytes() + 1);
  device.ops().copy(tensor, Tensor::wrap(host.data(), Shape{tensor.numel()}, tensor.dtype()));
  device.compute_stream().synchronize();
  std::vector<float> values(static_cast<std::size_t>(tensor.numel()));
  convert_elements(host.data(), tensor.dtype(), values.data(), DType::kF32, values.size());
  return values;
}

// Small integers: exact in bf16 and f16, and so are their sums over a few ranks.
inline std::vector<float> small_integers(std::int64_t count, int rank) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    values[static_cast<std::size_t>(i)] = static_cast<float>((i * 7 + rank * 13) % 41) - 20.0f;
  }
  return values;
}

}  // namespace zt::gpu_test
