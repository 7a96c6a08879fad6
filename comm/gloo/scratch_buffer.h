// ScratchBuffer: the comm thread's reusable staging memory. It grows to the largest size
// asked for and stays allocated, so steady-state ops allocate nothing; counted under
// comm_buffers. Confined to the comm thread (no locking).
#pragma once

#include <cstddef>

#include "core/memory_tracker.h"

namespace zt::comm {

class ScratchBuffer {
 public:
  explicit ScratchBuffer(MemoryTracker& tracker) : tracker_(tracker) {}

  // At least `bytes` bytes, aligned to MemoryTracker::kAlignment. Contents are not kept
  // across a call that grows the buffer.
  std::byte* reserve(std::size_t bytes);
  std::size_t capacity_bytes() const { return static_cast<std::size_t>(allocation_.bytes()); }

 private:
  MemoryTracker& tracker_;
  Allocation allocation_;
};

}  // namespace zt::comm
