// BatchUploader: see Note [Batches in staging memory].
#include "runtime/engine/batch_upload.h"

#include "core/memory_tracker.h"

namespace zt::engine {

BatchUploader::~BatchUploader() {
  for (const Pending& pending : pending_) {
    try {
      pending.copied.synchronize();
    } catch (...) {
      // A stream that failed runs nothing more, this copy included: the block is free.
    }
  }
}

Tensor BatchUploader::upload(const Tensor& host) {
  release_completed();
  Tensor copy =
      Tensor::empty(host.shape(), host.dtype(), device_.tracker(), MemoryCategory::kActivations);
  device_.ops().copy(host, copy);
  DeviceStream& compute = device_.compute_stream();
  // An inline stream has copied already; nothing to hold.
  if (compute.is_inline()) return copy;
  pending_.push_back({host, compute.record()});
  if (pending_.size() > kMaxPending) {
    pending_.front().copied.synchronize();
    pending_.pop_front();
  }
  return copy;
}

void BatchUploader::release_completed() {
  while (!pending_.empty() && pending_.front().copied.is_complete()) pending_.pop_front();
}

}  // namespace zt::engine
