// Aligned host blocks. (Pooling by size class comes with the allocator work of this layer.)
#include "core/device/cpu_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace zt {
namespace {

class HostAllocator final : public DeviceAllocator {
 public:
  const Device& device() const override { return device_; }

  void* allocate(std::size_t bytes) override {
    const std::size_t rounded = round_up(bytes);
    void* data = std::aligned_alloc(kMinAlignment, rounded);
    if (data == nullptr) return nullptr;
    std::lock_guard lock(mutex_);
    stats_.allocated_bytes += static_cast<std::int64_t>(rounded);
    stats_.reserved_bytes += static_cast<std::int64_t>(rounded);
    ++stats_.allocations;
    return data;
  }

  void deallocate(void* data, std::size_t bytes) noexcept override {
    std::free(data);
    const auto rounded = static_cast<std::int64_t>(round_up(bytes));
    std::lock_guard lock(mutex_);
    stats_.allocated_bytes -= rounded;
    stats_.reserved_bytes -= rounded;
    --stats_.allocations;
  }

  void fill_zero(void* data, std::size_t bytes) override { std::memset(data, 0, bytes); }
  void release_cached() noexcept override {}
  AllocatorStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  static std::size_t round_up(std::size_t bytes) {
    return (std::max<std::size_t>(bytes, 1) + kMinAlignment - 1) / kMinAlignment * kMinAlignment;
  }

  const Device device_ = Device::cpu();
  mutable std::mutex mutex_;
  AllocatorStats stats_;  // guarded by mutex_
};

}  // namespace

DeviceAllocator& host_allocator() {
  static HostAllocator allocator;  // never destroyed before the trackers of static objects
  return allocator;
}

}  // namespace zt
