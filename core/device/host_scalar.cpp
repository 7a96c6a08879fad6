// HostScalar's staging slot: 8 bytes of the device's host staging allocator, returned when
// the last handle goes and the device's write into it is done.
#include "core/device/host_scalar.h"

#include <new>

#include "core/device/device_context.h"

namespace zt {

// Note [A staged slot outlives its copy]
// The device writes a slot by an asynchronous copy, and the pinned pool hands a returned slot
// to the next loss or norm at once. A slot returned while its copy is still queued (its
// handle dropped unread: an ignored norm, or a step unwound by an exception between the
// enqueue and written()) would have that late copy land in its next owner's value, silently.
// So the last handle waits before returning the slot: for the written() event, or, when the
// slot went to the device (data()) without one, for everything queued on its writer stream so
// far. A value that was read is complete and costs no wait; a wait that fails (the device is
// gone) keeps the slot out of the pool for good rather than risk it.
struct HostScalar::Slot {
  Slot(DeviceAllocator& staging, DeviceStream& writer_stream)
      : allocator(staging),
        writer(writer_stream),
        data(static_cast<double*>(staging.allocate(sizeof(double)))) {
    if (data == nullptr) throw std::bad_alloc();
    *data = 0.0;
  }
  ~Slot() {
    try {
      if (has_event) {
        if (!written.is_complete()) written.synchronize();
      } else if (handed_out) {
        writer.synchronize();
      }
    } catch (...) {
      return;  // the copy's fate is unknown: the slot never goes back to the pool
    }
    allocator.deallocate(data, sizeof(double));
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  DeviceAllocator& allocator;
  DeviceStream& writer;  // the stream whose work writes *data
  double* data;
  bool handed_out = false;  // data() was given to work that may write it
  bool has_event = false;   // written() recorded the event after that work
  DeviceEvent written;      // complete once the device has written *data
};

HostScalar HostScalar::staged(DeviceContext& device) {
  return staged(device.host_staging_allocator(), device.compute_stream());
}

HostScalar HostScalar::staged(DeviceAllocator& host_staging, DeviceStream& writer) {
  HostScalar scalar;
  // A meta device's staging memory has no bytes: its kernels compute nothing, the value is 0.
  if (host_staging.device().meta) return scalar;
  scalar.slot_ = std::make_shared<Slot>(host_staging, writer);
  return scalar;
}

double* HostScalar::data() {
  if (!slot_) return nullptr;
  slot_->handed_out = true;
  return slot_->data;
}

void HostScalar::written(DeviceEvent event) {
  if (!slot_) return;
  slot_->written = std::move(event);
  slot_->has_event = true;
}

bool HostScalar::ready() const { return slot_ == nullptr || slot_->written.is_complete(); }

HostScalar::operator double() const {
  if (slot_ == nullptr) return value_;
  slot_->written.synchronize();
  return *slot_->data;
}

}  // namespace zt
