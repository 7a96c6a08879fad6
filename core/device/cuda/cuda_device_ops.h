// DeviceOps on one GPU: every op is enqueued on the device's compute stream; sum_of_squares
// waits for its result on the host. CUDA-free header.
#pragma once

#include <mutex>

#include "core/device/device_ops.h"

namespace zt {

class CudaDeviceOps final : public DeviceOps {
 public:
  // `compute_stream` is a cudaStream_t of `device`, which outlives these ops.
  CudaDeviceOps(Device device, void* compute_stream);
  CudaDeviceOps(const CudaDeviceOps&) = delete;
  CudaDeviceOps& operator=(const CudaDeviceOps&) = delete;
  ~CudaDeviceOps() override;

  void fill(const Tensor& values, float value) override;
  void fill_zero_bytes(const Tensor& values) override;
  void scale(const Tensor& values, float factor) override;
  void axpby(float alpha, const Tensor& x, float beta, const Tensor& y) override;
  double sum_of_squares(const Tensor& values) override;
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
  void* const compute_stream_;
  std::mutex partials_mutex_;          // guards the two buffers below between callers
  double* device_partials_ = nullptr;  // cuda_kernels::kMaxSumOfSquaresBlocks on the device
  double* host_partials_ = nullptr;    // as many, pinned, so the copy back is asynchronous
};

}  // namespace zt
