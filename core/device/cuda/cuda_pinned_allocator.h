// Page-locked host memory for staging copies between the host and a GPU: cudaHostAlloc'd
// blocks in a PooledHostAllocator (cached by size class, since pinning is slow: it maps and
// locks every page). CUDA-free header.
#pragma once

#include <cstddef>
#include <memory>

#include "core/device/device_allocator.h"

namespace zt {

// A pinned pool that keeps at most `max_cached_bytes` idle. Its blocks are host memory
// (Device::cpu()) that any GPU can copy to and from asynchronously. A staging block handed
// to an asynchronous copy must stay allocated until that copy's event has completed: the
// pool reuses a freed block at once, from the host.
std::unique_ptr<DeviceAllocator> make_pinned_host_allocator(
    std::size_t max_cached_bytes = std::size_t{256} << 20);

}  // namespace zt
