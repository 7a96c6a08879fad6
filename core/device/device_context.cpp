// The CPU device context, and the one place that picks a backend for a Device.
#include "core/device/device_context.h"

#include "core/device/cpu_allocator.h"
#include "core/device/cpu_device_ops.h"
#include "core/device/cpu_streams.h"
#include "core/device/cuda_module.h"
#include "core/device/meta_device.h"
#include "core/error.h"

namespace zt {
namespace {

class CpuDeviceContext final : public DeviceContext {
 public:
  // Owns its tracker, capped at `capacity_bytes`.
  CpuDeviceContext(Device device, std::int64_t capacity_bytes)
      : owned_tracker_(std::make_unique<MemoryTracker>(device, capacity_bytes)),
        tracker_(*owned_tracker_),
        compute_(device.to_string() + " compute"),
        copy_(device.to_string() + " copy") {}
  // Counts into a tracker the caller owns (and reads after the context is gone).
  explicit CpuDeviceContext(MemoryTracker& tracker)
      : tracker_(tracker),
        compute_(tracker.device().to_string() + " compute"),
        copy_(tracker.device().to_string() + " copy") {
    ZT_CHECK(tracker.device().kind == DeviceKind::kCpu, "a CPU context over a device tracker");
  }

  const Device& device() const override { return tracker_.device(); }
  MemoryTracker& tracker() override { return tracker_; }
  DeviceAllocator& allocator() override { return tracker_.allocator(); }
  DeviceStream& compute_stream() override { return compute_; }
  DeviceStream& copy_stream() override { return copy_; }
  // A meta host (an offloaded optimizer's, under the estimator) computes nothing.
  DeviceOps& ops() override {
    return tracker_.device().meta ? meta_device_ops() : cpu_device_ops();
  }
  DeviceAllocator& host_staging_allocator() override { return host_allocator(); }
  void synchronize() override { copy_.synchronize(); }

 private:
  std::unique_ptr<MemoryTracker> owned_tracker_;  // null when the caller owns the tracker
  MemoryTracker& tracker_;
  InlineCpuStream compute_;
  CpuWorkerStream copy_;
};

}  // namespace

std::unique_ptr<DeviceContext> make_cpu_device_context(std::int64_t capacity_bytes) {
  return std::make_unique<CpuDeviceContext>(Device::cpu(), capacity_bytes);
}

std::unique_ptr<DeviceContext> make_cpu_device_context(MemoryTracker& tracker) {
  return std::make_unique<CpuDeviceContext>(tracker);
}

std::unique_ptr<DeviceContext> make_device_context(Device device, std::int64_t capacity_bytes) {
  if (device.meta) return make_meta_device_context(device, capacity_bytes);
  if (device.kind == DeviceKind::kCpu) {
    return std::make_unique<CpuDeviceContext>(device, capacity_bytes);
  }
  return cuda_device_entries().get().make_device_context(device, capacity_bytes);
}

}  // namespace zt
