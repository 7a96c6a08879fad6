// cudaHostAlloc as a HostMemorySource, behind the pooled host allocator.
#include "core/device/cuda/cuda_pinned_allocator.h"

#include <cuda_runtime.h>

#include <limits>

#include "core/device/cpu_pool_allocator.h"

namespace zt {
namespace {

class PinnedHostMemory final : public HostMemorySource {
 public:
  void* obtain(std::size_t bytes) noexcept override {
    void* data = nullptr;
    // Portable: pinned for every CUDA context, so any GPU of the process copies at full speed.
    if (cudaHostAlloc(&data, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();  // a failed pin is an out-of-memory for the pool, not a sticky error
      return nullptr;
    }
    return data;
  }
  void give_back(void* data, std::size_t) noexcept override { cudaFreeHost(data); }
};

// Stateless; the pools over it belong to device contexts, which are gone before exit.
HostMemorySource& pinned_host_memory() {
  static PinnedHostMemory source;
  return source;
}

}  // namespace

std::unique_ptr<DeviceAllocator> make_pinned_host_allocator(std::size_t max_cached_bytes) {
  HostPoolLimits limits;
  limits.max_cached_bytes = max_cached_bytes;
  // Every size is pooled: a large staging buffer is the one most worth not pinning twice.
  limits.max_pooled_block_bytes = std::numeric_limits<std::size_t>::max();
  return std::make_unique<PooledHostAllocator>(pinned_host_memory(), limits);
}

}  // namespace zt
