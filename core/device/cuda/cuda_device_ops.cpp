// CudaDeviceOps: checks, then the kernels of buffer_kernels.cu on the compute stream.
#include "core/device/cuda/cuda_device_ops.h"

#include <cuda_runtime.h>

#include <string>

#include "core/config/byte_size.h"
#include "core/device/cuda/buffer_kernels_internal.h"
#include "core/device/cuda/cuda_check.h"

namespace zt {
namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Pageable host memory: a copy from or to it is staged by the driver and not asynchronous.
bool is_pageable_host_memory(const void* data) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, data);
  if (status != cudaSuccess) {
    cudaGetLastError();  // older drivers report unregistered host memory as an error
    return true;
  }
  return attributes.type == cudaMemoryTypeUnregistered;
}

}  // namespace

CudaDeviceOps::CudaDeviceOps(Device device, DeviceStream& compute_stream,
                             DeviceAllocator& host_staging)
    : device_(device),
      compute_(compute_stream),
      compute_stream_(compute_stream.native_handle()),
      host_staging_(host_staging) {
  CurrentDevice current(device.index);
  constexpr std::size_t kPartialsBytes =
      (cuda_kernels::kMaxSumOfSquaresBlocks + 1) * sizeof(double);
  void* device_partials = nullptr;
  ZT_CORE_CUDA_CHECK(cudaMalloc(&device_partials, kPartialsBytes),
                     "sum-of-squares partials on " + device.to_string());
  device_partials_ = static_cast<double*>(device_partials);
}

CudaDeviceOps::~CudaDeviceOps() {
  try {
    CurrentDevice current(device_.index);
    cudaFree(device_partials_);  // synchronizes: no kernel still writes the partials
  } catch (...) {
    // The device cannot be selected (lost): its memory goes with the process.
  }
}

void CudaDeviceOps::expect_on_device(const Tensor& values, const char* op) const {
  ZT_CHECK(values.defined(), std::string(op) + " of an undefined tensor");
  ZT_CHECK(values.device() == device_, std::string(op) + " on " + device_.to_string() +
                                           " given a tensor on " + values.device().to_string());
  ZT_CHECK(is_floating(values.dtype()), std::string(op) + " needs a floating dtype");
}

void CudaDeviceOps::fill(const Tensor& values, float value) {
  expect_on_device(values, "fill");
  CurrentDevice current(device_.index);
  cuda_kernels::fill(values.data(), values.dtype(), values.numel(), value, compute_stream_);
}

void CudaDeviceOps::fill_zero_bytes(const Tensor& values) {
  ZT_CHECK(values.device() == device_, "fill_zero_bytes on " + device_.to_string() +
                                           " of a tensor on " + values.device().to_string());
  if (values.numel() == 0) return;
  CurrentDevice current(device_.index);
  ZT_CORE_CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.nbytes(), as_stream(compute_stream_)),
                     "zeroing " + format_byte_size(static_cast<std::int64_t>(values.nbytes())) +
                         " on " + device_.to_string());
}

void CudaDeviceOps::scale(const Tensor& values, float factor) {
  expect_on_device(values, "scale");
  CurrentDevice current(device_.index);
  cuda_kernels::scale(values.data(), values.dtype(), values.numel(), factor, compute_stream_);
}

void CudaDeviceOps::axpby(float alpha, const Tensor& x, float beta, const Tensor& y) {
  expect_on_device(x, "axpby");
  expect_on_device(y, "axpby");
  ZT_CHECK(x.numel() == y.numel(), "axpby of tensors of different sizes");
  CurrentDevice current(device_.index);
  cuda_kernels::axpby(alpha, x.data(), x.dtype(), beta, y.data(), y.dtype(), y.numel(),
                      compute_stream_);
}

HostScalar CudaDeviceOps::sum_of_squares(const Tensor& values) {
  expect_on_device(values, "sum_of_squares");
  const std::int64_t n = values.numel();
  if (n == 0) return 0.0;
  CurrentDevice current(device_.index);
  HostScalar sum = HostScalar::staged(host_staging_, compute_);
  double* device_sum = device_partials_ + cuda_kernels::kMaxSumOfSquaresBlocks;
  std::lock_guard lock(partials_mutex_);
  cuda_kernels::sum_of_squares_partials(values.data(), values.dtype(), n, device_partials_,
                                        compute_stream_);
  cuda_kernels::sum_partials(device_partials_, cuda_kernels::sum_of_squares_blocks(n), device_sum,
                             compute_stream_);
  ZT_CORE_CUDA_CHECK(cudaMemcpyAsync(sum.data(), device_sum, sizeof(double), cudaMemcpyDeviceToHost,
                                     as_stream(compute_stream_)),
                     "sum_of_squares of " + std::to_string(n) + " elements to the host");
  sum.written(compute_.record());
  return sum;
}

void CudaDeviceOps::cast(const Tensor& src, const Tensor& dst) {
  expect_on_device(src, "cast");
  expect_on_device(dst, "cast");
  ZT_CHECK(src.numel() == dst.numel(), "cast between tensors of different sizes");
  CurrentDevice current(device_.index);
  cuda_kernels::cast(src.data(), src.dtype(), dst.data(), dst.dtype(), src.numel(),
                     compute_stream_);
}

void CudaDeviceOps::copy(const Tensor& src, const Tensor& dst) {
  copy_on_stream(src, dst, compute_stream_);
}

void CudaDeviceOps::copy_on(const Tensor& src, const Tensor& dst, DeviceStream& stream) {
  ZT_CHECK(stream.device() == device_,
           "a CUDA copy on stream " + stream.name() + ", not one of " + device_.to_string());
  copy_on_stream(src, dst, stream.native_handle());
}

void CudaDeviceOps::copy_on_stream(const Tensor& src, const Tensor& dst, void* stream) {
  ZT_CHECK(src.dtype() == dst.dtype() && src.numel() == dst.numel(),
           "copy between tensors of different dtypes or sizes");
  for (const Tensor* side : {&src, &dst}) {
    ZT_CHECK(
        side->device().kind == DeviceKind::kCpu || side->device() == device_,
        "a copy on " + device_.to_string() + " given a tensor on " + side->device().to_string());
  }
  if (src.numel() == 0 || src.data() == dst.data()) return;
  CurrentDevice current(device_.index);
  const std::string what = format_byte_size(static_cast<std::int64_t>(src.nbytes())) + " " +
                           src.device().to_string() + " -> " + dst.device().to_string();
  ZT_CORE_CUDA_CHECK(
      cudaMemcpyAsync(dst.data(), src.data(), src.nbytes(), cudaMemcpyDefault, as_stream(stream)),
      "copy " + what);
  const bool pageable =
      (src.device().kind == DeviceKind::kCpu && is_pageable_host_memory(src.data())) ||
      (dst.device().kind == DeviceKind::kCpu && is_pageable_host_memory(dst.data()));
  if (pageable) {
    ZT_CORE_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)),
                       "copy " + what + " (pageable host memory)");
  }
}

}  // namespace zt
