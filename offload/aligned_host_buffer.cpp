// Direct-I/O-aligned host buffers, tracked by category.
#include "offload/aligned_host_buffer.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"

namespace zt::offload {

AlignedHostBuffer::AlignedHostBuffer(std::int64_t bytes, MemoryTracker& tracker,
                                     MemoryCategory category)
    : bytes_(bytes), tracker_(&tracker), category_(category) {
  ZT_CHECK(bytes > 0 && bytes % static_cast<std::int64_t>(kAlignment) == 0,
           "direct-I/O buffers are whole 4 KiB blocks");
  tracker_->record(category_, bytes_);  // throws before allocating when over capacity
  if (posix_memalign(&data_, kAlignment, static_cast<std::size_t>(bytes)) != 0) {
    data_ = nullptr;
    tracker_->unrecord(category_, bytes_);
    throw OutOfMemoryError("cannot allocate " + std::to_string(bytes) +
                           " bytes of aligned host memory for NVMe optimizer states");
  }
  std::memset(data_, 0, static_cast<std::size_t>(bytes));
}

AlignedHostBuffer::AlignedHostBuffer(AlignedHostBuffer&& other) noexcept {
  *this = std::move(other);
}

AlignedHostBuffer& AlignedHostBuffer::operator=(AlignedHostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    tracker_ = std::exchange(other.tracker_, nullptr);
    category_ = other.category_;
  }
  return *this;
}

AlignedHostBuffer::~AlignedHostBuffer() { release(); }

void AlignedHostBuffer::release() noexcept {
  if (data_ == nullptr) return;
  tracker_->unrecord(category_, bytes_);
  std::free(data_);
  data_ = nullptr;
}

}  // namespace zt::offload
