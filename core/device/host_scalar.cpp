// HostScalar's staging slot: 8 bytes of the device's host staging allocator, returned when
// the last handle goes.
#include "core/device/host_scalar.h"

#include <new>

#include "core/device/device_context.h"

namespace zt {

struct HostScalar::Slot {
  explicit Slot(DeviceAllocator& staging)
      : allocator(staging), data(static_cast<double*>(staging.allocate(sizeof(double)))) {
    if (data == nullptr) throw std::bad_alloc();
    *data = 0.0;
  }
  ~Slot() { allocator.deallocate(data, sizeof(double)); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  DeviceAllocator& allocator;
  double* data;
  DeviceEvent written;  // complete once the device has written *data
};

HostScalar HostScalar::staged(DeviceContext& device) {
  return staged(device.host_staging_allocator());
}

HostScalar HostScalar::staged(DeviceAllocator& host_staging) {
  HostScalar scalar;
  // A meta device's staging memory has no bytes: its kernels compute nothing, the value is 0.
  if (host_staging.device().meta) return scalar;
  scalar.slot_ = std::make_shared<Slot>(host_staging);
  return scalar;
}

double* HostScalar::data() { return slot_ ? slot_->data : nullptr; }

void HostScalar::written(DeviceEvent event) {
  if (slot_) slot_->written = std::move(event);
}

bool HostScalar::ready() const { return slot_ == nullptr || slot_->written.is_complete(); }

HostScalar::operator double() const {
  if (slot_ == nullptr) return value_;
  slot_->written.synchronize();
  return *slot_->data;
}

}  // namespace zt
