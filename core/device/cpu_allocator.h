// The CPU's DeviceAllocator: aligned host memory, not zeroed unless asked. One per process
// (host_allocator()), shared by every CPU tracker: threads of one process share one heap.
#pragma once

#include "core/device/device_allocator.h"

namespace zt {

// The process's host allocator (thread-safe).
DeviceAllocator& host_allocator();

}  // namespace zt
