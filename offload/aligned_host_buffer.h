// AlignedHostBuffer: host memory aligned for direct I/O (O_DIRECT wants the buffer, offset
// and length on the device's logical block size; 4 KiB covers every NVMe format), counted
// against a host tracker's category for as long as it lives.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_tracker.h"

namespace zt::offload {

class AlignedHostBuffer {
 public:
  static constexpr std::size_t kAlignment = 4096;

  AlignedHostBuffer() = default;
  // `bytes` must be a multiple of kAlignment; the memory is zero-filled.
  AlignedHostBuffer(std::int64_t bytes, MemoryTracker& tracker, MemoryCategory category);
  AlignedHostBuffer(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer& operator=(AlignedHostBuffer&& other) noexcept;
  AlignedHostBuffer(const AlignedHostBuffer&) = delete;
  AlignedHostBuffer& operator=(const AlignedHostBuffer&) = delete;
  ~AlignedHostBuffer();

  void* data() const { return data_; }
  float* floats() const { return static_cast<float*>(data_); }
  std::int64_t bytes() const { return bytes_; }

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::int64_t bytes_ = 0;
  MemoryTracker* tracker_ = nullptr;
  MemoryCategory category_ = MemoryCategory::kHostOffload;
};

// `bytes` rounded up to a multiple of AlignedHostBuffer::kAlignment.
constexpr std::int64_t round_up_to_alignment(std::int64_t bytes) {
  constexpr auto kAlign = static_cast<std::int64_t>(AlignedHostBuffer::kAlignment);
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace zt::offload
