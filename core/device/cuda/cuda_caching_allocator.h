// CudaCachingAllocator: device memory for one GPU, cached so that a training step's buffers
// are reused by the next step without cudaMalloc/cudaFree (both synchronize the device).
// Sizes round to 512 B; requests below 1 MiB share 2 MiB segments (the small pool), larger
// ones get segments of their own rounded to 2 MiB (the large pool); a request takes the
// best-fitting cached block, split when the rest is worth keeping, and freed neighbours
// merge again. Blocks are ordered on the device's compute stream (Note [Stream-ordered
// reuse]). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/device/device_allocator.h"

namespace zt {

class CudaCachingAllocator final : public DeviceAllocator {
 public:
  static constexpr std::size_t kRoundBytes = 512;
  static constexpr std::size_t kSmallRequestBytes = std::size_t{1} << 20;  // below: small pool
  static constexpr std::size_t kSegmentRoundBytes = std::size_t{2} << 20;

  // `compute_stream` (a cudaStream_t) orders the blocks; `max_reserved_bytes` (> 0) caps what
  // the allocator holds from the device, cached blocks included (runtime.device_memory_limit).
  CudaCachingAllocator(Device device, void* compute_stream, std::int64_t max_reserved_bytes = 0);
  CudaCachingAllocator(const CudaCachingAllocator&) = delete;
  CudaCachingAllocator& operator=(const CudaCachingAllocator&) = delete;
  ~CudaCachingAllocator() override;  // waits for the compute stream, frees every segment

  const Device& device() const override { return device_; }
  // nullptr when the cap or the device leaves no room even after the cached blocks are freed.
  void* allocate(std::size_t bytes) override;
  void deallocate(void* data, std::size_t bytes) noexcept override;
  // cudaMemsetAsync on the compute stream.
  void fill_zero(void* data, std::size_t bytes) override;
  // Frees the segments no block of which is in use (after the compute stream's work).
  void release_cached() noexcept override;
  AllocatorStats stats() const override;

  std::int64_t max_reserved_bytes() const { return max_reserved_bytes_; }

 private:
  struct Pools;

  const Device device_;
  void* const compute_stream_;
  const std::int64_t max_reserved_bytes_;
  std::unique_ptr<Pools> pools_;
};

}  // namespace zt
