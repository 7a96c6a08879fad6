// DeviceAllocator: where a device's bytes come from. The MemoryTracker counts them (by
// category, against runtime.device_memory_limit); the allocator only obtains and returns
// blocks. CPU: pooled, aligned host memory (cpu_pool_allocator.h). CUDA: a caching,
// stream-ordered allocator with size classes (cuda/cuda_caching_allocator.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"

namespace zt {

// What an allocator holds, for out-of-memory reports and memory.json.
struct AllocatorStats {
  std::int64_t allocated_bytes = 0;  // handed out and not yet returned (rounded sizes)
  std::int64_t reserved_bytes = 0;   // obtained from the system: allocated + cached
  std::int64_t allocations = 0;      // blocks handed out now
  // Blocks ever obtained from the system (the cache's misses): constant across steady-state
  // training steps, which reuse what the first step obtained.
  std::int64_t blocks_obtained = 0;
  std::vector<std::int64_t> largest_allocated_blocks;  // up to 8, largest first
};

class DeviceAllocator {
 public:
  // Every block is aligned to this at least (a cache line on the CPU, 256 B on CUDA).
  static constexpr std::size_t kMinAlignment = 64;

  virtual ~DeviceAllocator() = default;
  virtual const Device& device() const = 0;

  // A block of at least `bytes` (> 0), not initialized. Returns nullptr when neither the
  // cache nor the system has one; the tracker turns that into an OutOfMemoryError that
  // says what is live. Ordering on CUDA: the block may be used at once by work on the
  // device's compute stream (see Note [Stream-ordered reuse] in the CUDA allocator).
  virtual void* allocate(std::size_t bytes) = 0;
  // Returns a block from allocate() with the same `bytes`. Never throws.
  virtual void deallocate(void* data, std::size_t bytes) noexcept = 0;
  // Sets `bytes` at `data` to zero, ordered on the compute stream (CPU: now).
  virtual void fill_zero(void* data, std::size_t bytes) = 0;
  // Gives cached blocks back to the system (before reporting an out-of-memory, or on request).
  virtual void release_cached() noexcept = 0;
  virtual AllocatorStats stats() const = 0;
};

}  // namespace zt
