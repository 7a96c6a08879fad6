// HostScalar: one double that work on a device writes into host staging memory (CUDA:
// pinned) while the host goes on, so a loss can hand back its sum without a wait per
// micro-batch; the trainer reads a step's sums after one wait (Note [One host wait per step]
// in runtime/engine/trainer.cpp).
#pragma once

#include <memory>

#include "core/device/device_stream.h"

namespace zt {

class DeviceAllocator;
class DeviceContext;

// A cheap, copyable handle. Thread-compatible: written by one op, then read.
class HostScalar {
 public:
  HostScalar() = default;  // 0, known on the host
  // A value already known on the host (a CPU result, a custom loss's double).
  HostScalar(double value) : value_(value) {}  // NOLINT(google-explicit-constructor)

  // A zeroed slot in `device`'s host staging memory for work on its compute stream to
  // write (through data()); the op that writes it records the event after that work with
  // written(). The slot must not outlive `device`. On a meta device: 0, known on the host.
  // Note [A staged slot outlives its copy].
  static HostScalar staged(DeviceContext& device);
  // The same from a host staging allocator, for work on `writer` (a meta allocator: 0,
  // known on the host).
  static HostScalar staged(DeviceAllocator& host_staging, DeviceStream& writer);

  // Where the device writes the value; null for a value known on the host.
  double* data();
  // The write is enqueued: the value is valid once `event` completes.
  void written(DeviceEvent event);
  // Whether the value can be read without waiting (always on the CPU).
  bool ready() const;
  // The value; waits for the device's write first if it is still pending.
  operator double() const;  // NOLINT(google-explicit-constructor)

 private:
  struct Slot;
  std::shared_ptr<Slot> slot_;  // null for a value known on the host
  double value_ = 0.0;
};

}  // namespace zt
