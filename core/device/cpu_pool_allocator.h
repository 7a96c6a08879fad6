// PooledHostAllocator: host blocks cached by size class (host_size_class.h) so that the
// buffers a training step frees are handed to the next step without a trip to the system.
// The blocks come from a HostMemorySource: the C heap (host_allocator()) or, in the CUDA
// backend, page-locked memory for staging copies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/device/device_allocator.h"
#include "core/device/host_size_class.h"

namespace zt {

// Where a pool's blocks come from and go back to. Thread-safe.
class HostMemorySource {
 public:
  virtual ~HostMemorySource() = default;
  // `bytes` (a multiple of 64) aligned to 64 B at least; nullptr when the system has none.
  virtual void* obtain(std::size_t bytes) noexcept = 0;
  virtual void give_back(void* data, std::size_t bytes) noexcept = 0;
};

// The C heap (std::aligned_alloc and std::free).
HostMemorySource& system_host_memory();

struct HostPoolLimits {
  // Idle bytes the pool may keep; a freed block that would take it past this goes back to
  // the source, so a rank never holds more than this unused.
  std::size_t max_cached_bytes = std::size_t{512} << 20;
  // Larger blocks go straight to the source and back: they are rare (whole flat buffers),
  // and the system maps them afresh as cheaply as a pool could keep them.
  std::size_t max_pooled_block_bytes = std::size_t{64} << 20;
  // false: every block straight to the source and back (sanitizer builds).
  bool pool = true;
};

class PooledHostAllocator final : public DeviceAllocator {
 public:
  PooledHostAllocator(HostMemorySource& source, HostPoolLimits limits,
                      Device device = Device::cpu());
  PooledHostAllocator(const PooledHostAllocator&) = delete;
  PooledHostAllocator& operator=(const PooledHostAllocator&) = delete;
  ~PooledHostAllocator() override;  // gives the cached blocks back; none may be in use

  const Device& device() const override { return device_; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* data, std::size_t bytes) noexcept override;
  void fill_zero(void* data, std::size_t bytes) override;
  void release_cached() noexcept override;
  AllocatorStats stats() const override;

  const HostPoolLimits& limits() const { return limits_; }

 private:
  bool pooled(std::size_t class_bytes) const {
    return limits_.pool && class_bytes <= limits_.max_pooled_block_bytes;
  }
  void count_handed_out_locked(std::size_t class_bytes);

  // Note [Allocation-free reuse]
  // A size class's free list and count live in an array indexed by class, and a class's free
  // list keeps room for every block of it handed out: once the first training step has
  // obtained its blocks, allocating and freeing them again touches neither the system nor
  // the heap (no map node, no vector growth).
  struct SizeClass {
    std::vector<void*> cached_blocks;
    std::int64_t blocks_in_use = 0;
  };

  HostMemorySource& source_;
  const HostPoolLimits limits_;
  const Device device_;
  mutable std::mutex mutex_;  // guards everything below
  std::array<SizeClass, kHostSizeClassCount> classes_;
  std::int64_t cached_bytes_ = 0;
  std::int64_t allocated_bytes_ = 0;
  std::int64_t allocations_ = 0;
  std::int64_t blocks_obtained_ = 0;
};

}  // namespace zt
