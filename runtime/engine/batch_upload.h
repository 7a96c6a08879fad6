// BatchUpload: copies a batch's host tensors to the device without blocking the host.
#pragma once

#include <cstddef>
#include <deque>

#include "core/device/device_context.h"
#include "core/device/device_stream.h"
#include "core/tensor.h"

namespace zt::engine {

// Note [Batches in staging memory]
// Off the CPU, batch sources read into the device's host staging memory (pinned on CUDA), so
// a batch's copy to the device is asynchronous: a copy from pageable memory would make the
// host wait for the compute stream per tensor (two waits per micro-batch, which is what kept
// the host from running ahead of the GPU). The copy runs on the compute stream, in order
// with the forward that reads it: the device's allocator is ordered on that stream, so a
// copy on the copy stream into a freshly allocated block would first have to wait for the
// block's previous users anyway, and a micro-batch's ids are tens of KiB (microseconds).
// A staging block must outlive its copy: each upload holds the host tensor until the copy's
// event completes, and at most kMaxPending are held before the oldest is waited for.
class BatchUploader {
 public:
  // Uploads held at once before the host waits for the oldest: more micro-batches ahead of
  // the device than any step's accumulation needs to overlap.
  static constexpr std::size_t kMaxPending = 16;

  explicit BatchUploader(DeviceContext& device) : device_(device) {}
  // Waits for the copies still pending: their staging blocks go back to a pool that would
  // hand them out again at once.
  ~BatchUploader();
  BatchUploader(const BatchUploader&) = delete;
  BatchUploader& operator=(const BatchUploader&) = delete;

  // A copy of host tensor `host` on the device, counted there as activations; the copy is
  // enqueued on the compute stream and `host` is held until it has run.
  Tensor upload(const Tensor& host);
  // Host tensors still held for copies that have not run yet.
  std::size_t pending() const { return pending_.size(); }
  // Drops the holds whose copies have run (after a wait on the compute stream: all of them).
  void release_completed();

 private:
  struct Pending {
    Tensor host;
    DeviceEvent copied;
  };
  DeviceContext& device_;
  std::deque<Pending> pending_;
};

}  // namespace zt::engine
