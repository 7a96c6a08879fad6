// The DeviceContext of one GPU (cuda:N). CUDA-free, so that device_context.cpp, which picks
// the backend, includes it under ZT_HAVE_CUDA without CUDA headers.
#pragma once

#include <cstdint>
#include <memory>

#include "core/device/device_context.h"

namespace zt {

// The context for `device` (a CUDA device): a compute and a copy stream, a caching allocator
// and a tracker both capped at `capacity_bytes` (0: the GPU's memory), pinned staging memory
// and the CUDA DeviceOps. Throws ConfigError naming runtime.device when no GPU is visible,
// and naming runtime.device_index with both numbers when the index is not one of them.
std::unique_ptr<DeviceContext> make_cuda_device_context(Device device, std::int64_t capacity_bytes);

}  // namespace zt
