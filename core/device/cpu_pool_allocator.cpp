// PooledHostAllocator's free lists and counters, and the C heap as a block source.
#include "core/device/cpu_pool_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/device/host_size_class.h"
#include "core/error.h"

namespace zt {
namespace {

// Blocks of a page or more are page-aligned: offloaded model states and direct-I/O buffers
// come from here, and page-aligned buffers are what DMA engines and O_DIRECT transfer whole.
constexpr std::size_t kPageBytes = 4096;

class SystemHostMemory final : public HostMemorySource {
 public:
  void* obtain(std::size_t bytes) noexcept override {
    const std::size_t alignment = bytes >= kPageBytes ? kPageBytes : DeviceAllocator::kMinAlignment;
    // aligned_alloc wants a multiple of the alignment; the block's tail is simply unused.
    return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  }
  void give_back(void* data, std::size_t) noexcept override { std::free(data); }
};

constexpr std::size_t kLargestBlocksReported = 8;

}  // namespace

HostMemorySource& system_host_memory() {
  static SystemHostMemory source;
  return source;
}

PooledHostAllocator::PooledHostAllocator(HostMemorySource& source, HostPoolLimits limits,
                                         Device device)
    : source_(source), limits_(limits), device_(device) {}

PooledHostAllocator::~PooledHostAllocator() { release_cached(); }

void* PooledHostAllocator::allocate(std::size_t bytes) {
  ZT_CHECK(bytes > 0, "a host allocation of 0 bytes");
  const std::size_t class_bytes = host_size_class_bytes(bytes);
  if (pooled(class_bytes)) {
    std::lock_guard lock(mutex_);
    std::vector<void*>& cached = classes_[host_size_class_index(class_bytes)].cached_blocks;
    if (!cached.empty()) {
      void* data = cached.back();
      cached.pop_back();
      cached_bytes_ -= static_cast<std::int64_t>(class_bytes);
      count_handed_out_locked(class_bytes);
      return data;
    }
  }
  // A miss: the source is asked outside the lock, so that threads that hit the cache do not
  // wait behind a large fresh mapping.
  void* data = source_.obtain(class_bytes);
  if (data == nullptr) return nullptr;
  std::lock_guard lock(mutex_);
  ++blocks_obtained_;
  count_handed_out_locked(class_bytes);
  if (pooled(class_bytes)) {
    SizeClass& size_class = classes_[host_size_class_index(class_bytes)];
    std::vector<void*>& cached = size_class.cached_blocks;
    const std::size_t needed = cached.size() + static_cast<std::size_t>(size_class.blocks_in_use);
    try {  // room to cache every block of the class when freed (Note [Allocation-free reuse])
      if (cached.capacity() < needed) cached.reserve(std::max(needed, 2 * cached.capacity()));
    } catch (...) {
      // No room now: deallocate tries again, or gives the block back to the source.
    }
  }
  return data;
}

void PooledHostAllocator::count_handed_out_locked(std::size_t class_bytes) {
  allocated_bytes_ += static_cast<std::int64_t>(class_bytes);
  ++allocations_;
  ++classes_[host_size_class_index(class_bytes)].blocks_in_use;
}

void PooledHostAllocator::deallocate(void* data, std::size_t bytes) noexcept {
  if (data == nullptr) return;
  const std::size_t class_bytes = host_size_class_bytes(bytes);
  {
    std::lock_guard lock(mutex_);
    SizeClass& size_class = classes_[host_size_class_index(class_bytes)];
    allocated_bytes_ -= static_cast<std::int64_t>(class_bytes);
    --allocations_;
    --size_class.blocks_in_use;
    const bool fits = cached_bytes_ + static_cast<std::int64_t>(class_bytes) <=
                      static_cast<std::int64_t>(limits_.max_cached_bytes);
    if (pooled(class_bytes) && fits) {
      try {
        size_class.cached_blocks.push_back(data);
        cached_bytes_ += static_cast<std::int64_t>(class_bytes);
        return;
      } catch (...) {
        // No room for the free list's entry: the block goes back to the source instead.
      }
    }
  }
  source_.give_back(data, class_bytes);
}

void PooledHostAllocator::fill_zero(void* data, std::size_t bytes) {
  if (bytes > 0) std::memset(data, 0, bytes);
}

void PooledHostAllocator::release_cached() noexcept {
  for (std::size_t index = 0; index < kHostSizeClassCount; ++index) {
    std::vector<void*> released;
    {
      std::lock_guard lock(mutex_);
      std::vector<void*>& cached = classes_[index].cached_blocks;
      if (cached.empty()) continue;
      cached_bytes_ -= static_cast<std::int64_t>(cached.size() * host_size_class_at(index));
      released.swap(cached);
    }
    for (void* data : released) source_.give_back(data, host_size_class_at(index));
  }
}

AllocatorStats PooledHostAllocator::stats() const {
  std::lock_guard lock(mutex_);
  AllocatorStats stats;
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = allocated_bytes_ + cached_bytes_;
  stats.allocations = allocations_;
  stats.blocks_obtained = blocks_obtained_;
  for (std::size_t index = kHostSizeClassCount;
       index-- > 0 && stats.largest_allocated_blocks.size() < kLargestBlocksReported;) {
    for (std::int64_t i = 0; i < classes_[index].blocks_in_use &&
                             stats.largest_allocated_blocks.size() < kLargestBlocksReported;
         ++i) {
      stats.largest_allocated_blocks.push_back(
          static_cast<std::int64_t>(host_size_class_at(index)));
    }
  }
  return stats;
}

}  // namespace zt
