// DeviceOps on host memory: loops in fp32 over chunks converted on the stack, so nothing is
// allocated; sums of squares accumulate in double, in element order.
#pragma once

#include "core/device/device_ops.h"

namespace zt {

class CpuDeviceOps final : public DeviceOps {
 public:
  void fill(const Tensor& values, float value) override;
  void fill_zero_bytes(const Tensor& values) override;
  void scale(const Tensor& values, float factor) override;
  void axpby(float alpha, const Tensor& x, float beta, const Tensor& y) override;
  HostScalar sum_of_squares(const Tensor& values) override;
  void cast(const Tensor& src, const Tensor& dst) override;
  void copy(const Tensor& src, const Tensor& dst) override;
  // An inline stream copies now; a CpuWorkerStream copies on its worker thread.
  void copy_on(const Tensor& src, const Tensor& dst, DeviceStream& stream) override;
};

// The process's CPU ops (stateless).
DeviceOps& cpu_device_ops();

}  // namespace zt
