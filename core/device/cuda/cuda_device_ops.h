// DeviceOps on one GPU: every op is enqueued on the device's compute stream; sum_of_squares
// copies its result into pinned host memory without waiting. CUDA-free header.
#pragma once

#include <mutex>

#include "core/device/device_allocator.h"
#include "core/device/device_ops.h"

namespace zt {

class CudaDeviceOps final : public DeviceOps {
 public:
  // `compute_stream` (a cudaStream_t) and `host_staging` (pinned) belong to `device`'s
  // context and outlive these ops.
  CudaDeviceOps(Device device, DeviceStream& compute_stream, DeviceAllocator& host_staging);
  CudaDeviceOps(const CudaDeviceOps&) = delete;
  CudaDeviceOps& operator=(const CudaDeviceOps&) = delete;
  ~CudaDeviceOps() override;

  void fill(const Tensor& values, float value) override;
  void fill_zero_bytes(const Tensor& values) override;
  void scale(const Tensor& values, float factor) override;
  void axpby(float alpha, const Tensor& x, float beta, const Tensor& y) override;
  HostScalar sum_of_squares(const Tensor& values) override;
  void cast(const Tensor& src, const Tensor& dst) override;
  // cudaMemcpyAsync (cudaMemcpyDefault) on the compute stream; when either side is pageable
  // host memory the call returns only after the copy (the host may then reuse that memory).
  void copy(const Tensor& src, const Tensor& dst) override;
  // The same on `stream`'s cudaStream_t (pageable host memory: returns after the copy).
  void copy_on(const Tensor& src, const Tensor& dst, DeviceStream& stream) override;

 private:
  void copy_on_stream(const Tensor& src, const Tensor& dst, void* stream);
  void expect_on_device(const Tensor& values, const char* op) const;

  const Device device_;
  DeviceStream& compute_;
  void* const compute_stream_;  // compute_'s cudaStream_t
  DeviceAllocator& host_staging_;
  std::mutex partials_mutex_;  // held while a sum's kernels use the buffer below
  // cuda_kernels::kMaxSumOfSquaresBlocks partials, then the sum of the last call.
  double* device_partials_ = nullptr;
};

}  // namespace zt
