// The process's host allocator: a PooledHostAllocator over the C heap, unpooled under
// AddressSanitizer.
#include "core/device/cpu_allocator.h"

#include "core/device/cpu_pool_allocator.h"
#include "core/device/host_heap.h"

namespace zt {
namespace {

// Under AddressSanitizer every block goes straight to the C heap and back: a pooled block
// stays "allocated" for ASan after we free it, so a use after free would go unseen.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace

bool host_allocator_pools_blocks() { return !kAddressSanitizer; }

DeviceAllocator& host_allocator() {
  // The heap too keeps what a step frees (Note [Heap trimming]): the libraries' buffers.
  [[maybe_unused]] static const bool heap_kept = keep_freed_heap_memory();
  HostPoolLimits limits;
  limits.pool = host_allocator_pools_blocks();
  // Never destroyed before the trackers of static objects, which free into it.
  static PooledHostAllocator allocator(system_host_memory(), limits);
  return allocator;
}

}  // namespace zt
