// PooledHostAllocator's free lists and counters, and the C heap as a block source.
#include "core/device/cpu_pool_allocator.h"

#include <cstdlib>
#include <cstring>
#include <utility>

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
    auto cached = cached_blocks_.find(class_bytes);
    if (cached != cached_blocks_.end() && !cached->second.empty()) {
      void* data = cached->second.back();
      cached->second.pop_back();
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
  count_handed_out_locked(class_bytes);
  return data;
}

void PooledHostAllocator::count_handed_out_locked(std::size_t class_bytes) {
  allocated_bytes_ += static_cast<std::int64_t>(class_bytes);
  ++allocations_;
  ++blocks_in_use_[class_bytes];
}

void PooledHostAllocator::deallocate(void* data, std::size_t bytes) noexcept {
  if (data == nullptr) return;
  const std::size_t class_bytes = host_size_class_bytes(bytes);
  {
    std::lock_guard lock(mutex_);
    allocated_bytes_ -= static_cast<std::int64_t>(class_bytes);
    --allocations_;
    auto in_use = blocks_in_use_.find(class_bytes);
    if (in_use != blocks_in_use_.end() && --in_use->second == 0) blocks_in_use_.erase(in_use);
    const bool fits = cached_bytes_ + static_cast<std::int64_t>(class_bytes) <=
                      static_cast<std::int64_t>(limits_.max_cached_bytes);
    if (pooled(class_bytes) && fits) {
      try {
        cached_blocks_[class_bytes].push_back(data);
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
  std::map<std::size_t, std::vector<void*>> released;
  {
    std::lock_guard lock(mutex_);
    released = std::exchange(cached_blocks_, {});
    cached_bytes_ = 0;
  }
  for (const auto& [class_bytes, blocks] : released) {
    for (void* data : blocks) source_.give_back(data, class_bytes);
  }
}

AllocatorStats PooledHostAllocator::stats() const {
  std::lock_guard lock(mutex_);
  AllocatorStats stats;
  stats.allocated_bytes = allocated_bytes_;
  stats.reserved_bytes = allocated_bytes_ + cached_bytes_;
  stats.allocations = allocations_;
  for (auto it = blocks_in_use_.rbegin();
       it != blocks_in_use_.rend() &&
       stats.largest_allocated_blocks.size() < kLargestBlocksReported;
       ++it) {
    for (std::int64_t i = 0;
         i < it->second && stats.largest_allocated_blocks.size() < kLargestBlocksReported; ++i) {
      stats.largest_allocated_blocks.push_back(static_cast<std::int64_t>(it->first));
    }
  }
  return stats;
}

}  // namespace zt
