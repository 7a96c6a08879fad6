// The meta device (Note [Meta devices] in core/device.h): an allocator that hands out
// addresses without memory, DeviceOps that do nothing, and a context over them, so the real
// training code can run for its allocations alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/device.h"
#include "core/device/device_allocator.h"
#include "core/device/device_context.h"
#include "core/device/device_ops.h"

namespace zt {

// Hands out distinct, aligned addresses that no memory backs. They are non-canonical on
// x86-64 (and outside any mapping elsewhere), so code that touches one faults at once
// instead of reading something plausible. Thread-safe.
class MetaAllocator final : public DeviceAllocator {
 public:
  explicit MetaAllocator(Device device);
  const Device& device() const override { return device_; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* data, std::size_t bytes) noexcept override;
  void fill_zero(void*, std::size_t) override {}
  void release_cached() noexcept override {}
  AllocatorStats stats() const override;

 private:
  const Device device_;
  std::atomic<std::uint64_t> next_offset_{0};
  std::atomic<std::int64_t> allocated_bytes_{0};
  std::atomic<std::int64_t> allocations_{0};
};

// Ops that change nothing: sums of squares are 0 and copies leave their destination as it
// was (a host value read back from a meta buffer keeps what the host had).
DeviceOps& meta_device_ops();

// Bytes a meta context's ops copied on a stream (DeviceOps::copy_on): the host <-> device
// transfers of offloading, as the real run makes them. 0 for any other context.
std::int64_t meta_stream_copy_bytes(DeviceContext& context);

// A context for the meta device standing for `stands_for` (its kind and index), its tracker
// capped at `capacity_bytes` (0: none); host staging memory is meta too.
std::unique_ptr<DeviceContext> make_meta_device_context(Device stands_for,
                                                        std::int64_t capacity_bytes = 0);

}  // namespace zt
