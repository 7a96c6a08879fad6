// DeviceOps: what the strategies, the optimizer step and the trainer do to whole buffers,
// on the device that holds them. Every op is enqueued on the device's compute stream (CPU:
// runs now). Floating dtypes f32, bf16 and f16; arithmetic in fp32, results rounded once
// into the destination's dtype. Reductions are deterministic: the same inputs give bitwise
// the same result on every call (fixed blocking, fixed order).
#pragma once

#include "core/device/device_stream.h"
#include "core/device/host_scalar.h"
#include "core/tensor.h"

namespace zt {

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;

  // Every element of `values` = value.
  virtual void fill(const Tensor& values, float value) = 0;
  // Every byte of `values` = 0 (any dtype).
  virtual void fill_zero_bytes(const Tensor& values) = 0;
  // values *= factor.
  virtual void scale(const Tensor& values, float factor) = 0;
  // y = alpha * x + beta * y (beta == 0 ignores y's old contents, NaN included). x and y
  // have the same element count; their dtypes may differ.
  virtual void axpby(float alpha, const Tensor& x, float beta, const Tensor& y) = 0;
  // Σ values², accumulated in double: in element order (CPU), or per thread and block of a
  // grid fixed by the size, the blocks' partials then summed in block order (CUDA). The host
  // does not wait: the sum lands in host staging memory once the compute stream has run
  // (CPU: at once); reading the HostScalar waits for it, so a caller summing several slices
  // waits once for all of them.
  virtual HostScalar sum_of_squares(const Tensor& values) = 0;
  // dst = src converted to dst's dtype (same element count).
  virtual void cast(const Tensor& src, const Tensor& dst) = 0;
  // dst = src, same dtype and size; either may live on the host or this device (CUDA: a
  // host<->device or device<->device copy ordered on the compute stream).
  virtual void copy(const Tensor& src, const Tensor& dst) = 0;
  // The same copy enqueued on `stream` (this device's copy stream: a worker thread on the
  // CPU, a cudaStream_t on CUDA), so it overlaps the compute stream; order it with events.
  // Both tensors' storage is kept alive until the copy has run; their contents must not
  // change (src) or be read (dst) before an event recorded after it completes.
  virtual void copy_on(const Tensor& src, const Tensor& dst, DeviceStream& stream) = 0;
};

}  // namespace zt
