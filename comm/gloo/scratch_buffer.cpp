// ScratchBuffer growth: free the old block first, so the peak is the new size, not the sum.
#include "comm/gloo/scratch_buffer.h"

#include <cstdint>

namespace zt::comm {

std::byte* ScratchBuffer::reserve(std::size_t bytes) {
  if (bytes > capacity_bytes()) {
    allocation_ = Allocation();
    allocation_ = tracker_.allocate(static_cast<std::int64_t>(bytes), MemoryCategory::kCommBuffers);
  }
  return static_cast<std::byte*>(allocation_.data());
}

}  // namespace zt::comm
