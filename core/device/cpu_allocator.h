// The CPU's DeviceAllocator: pooled, aligned host memory (cpu_pool_allocator.h), not zeroed
// unless asked. One per process (host_allocator()), shared by every CPU tracker: threads of
// one process share one heap.
#pragma once

#include "core/device/device_allocator.h"

namespace zt {

// The process's host allocator (thread-safe).
DeviceAllocator& host_allocator();

// Whether host_allocator() keeps freed blocks for reuse: false under AddressSanitizer, where
// every block goes back to the C heap so that a use after free is still caught.
bool host_allocator_pools_blocks();

}  // namespace zt
