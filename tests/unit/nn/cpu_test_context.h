// The CPU device and kernels for nn tests that own their MemoryTracker: a ModuleContext over
// a CPU DeviceContext that counts into the test's tracker.
#pragma once

#include <memory>

#include "core/device/device_context.h"
#include "core/memory_tracker.h"
#include "nn/kernels/kernel_backend.h"
#include "nn/module.h"

namespace zt::nn::testing {

inline const KernelBackend& cpu_kernels() { return kernel_backend_for(Device::cpu()); }

class CpuTestContext {
 public:
  explicit CpuTestContext(MemoryTracker& tracker) : device_(make_cpu_device_context(tracker)) {}

  DeviceContext& device() { return *device_; }
  ModuleContext module(SavedActivations& saved) { return {*device_, cpu_kernels(), saved}; }

 private:
  std::unique_ptr<DeviceContext> device_;
};

}  // namespace zt::nn::testing
