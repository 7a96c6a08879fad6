// Tensors: contiguous views (offset, shape, dtype) into storage on a device, allocated
// through a MemoryTracker that counts every byte per category (memory.json).
#pragma once

#include "core/device.h"
#include "core/device/device_context.h"
#include "core/dtype.h"
#include "core/memory_tracker.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace zerotrain {

using zt::Device;
using zt::DeviceContext;  // a device's allocator, streams and buffer ops
using zt::DeviceKind;
using zt::DType;
using zt::MemoryCategory;
using zt::MemoryTracker;
using zt::Shape;
using zt::Tensor;

}  // namespace zerotrain
