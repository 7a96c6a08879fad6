// DeviceContext: one rank's device and everything that works on it: its allocator and
// MemoryTracker, its compute and copy streams, and its DeviceOps. Created once per rank
// (make_device_context) and handed down to every layer that allocates or computes, so no
// layer above core names a backend.
#pragma once

#include <cstdint>
#include <memory>

#include "core/device.h"
#include "core/device/device_allocator.h"
#include "core/device/device_ops.h"
#include "core/device/device_stream.h"
#include "core/memory_tracker.h"

namespace zt {

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual const Device& device() const = 0;
  virtual MemoryTracker& tracker() = 0;
  virtual DeviceAllocator& allocator() = 0;
  virtual DeviceStream& compute_stream() = 0;
  virtual DeviceStream& copy_stream() = 0;
  virtual DeviceOps& ops() = 0;
  // Host memory for staging copies to and from this device (CUDA: pinned, so copies run
  // asynchronously at full bandwidth; CPU: the host allocator itself).
  virtual DeviceAllocator& host_staging_allocator() = 0;
  // Blocks until the compute and copy streams are idle; rethrows what failed on them.
  virtual void synchronize() = 0;
};

// The context for `device` with a tracker capped at `capacity_bytes` (0: no cap).
// Throws ConfigError naming runtime.device when CUDA is asked for and this binary has no
// CUDA backend or the machine has no GPU, and naming runtime.device_index with both numbers
// when the index is beyond the visible GPUs.
std::unique_ptr<DeviceContext> make_device_context(Device device, std::int64_t capacity_bytes = 0);

// The CPU context (cpu:0), the one tests use.
std::unique_ptr<DeviceContext> make_cpu_device_context(std::int64_t capacity_bytes = 0);
// A CPU context counting into `tracker`, which the caller owns and may read after the
// context is gone (tests that check what was allocated). `tracker` outlives the context.
std::unique_ptr<DeviceContext> make_cpu_device_context(MemoryTracker& tracker);

}  // namespace zt
