// DeviceStaging: how the Gloo communicator moves tensors that live on a device (CUDA):
// the comm thread copies them into pinned host buffers (the device's staging allocator),
// runs the host collective there, and copies the results back, so several ranks can share
// one GPU (which NCCL refuses). Confined to the comm thread (no locking).
#pragma once

#include "comm/gloo/collective_request.h"
#include "comm/gloo/scratch_buffer.h"
#include "core/device/device_context.h"
#include "core/memory_tracker.h"

namespace zt::comm {

class DeviceStaging {
 public:
  // `device` outlives this.
  explicit DeviceStaging(DeviceContext& device);

  // The same request over host buffers, holding copies of the request's inputs: the
  // device tensors are copied out and the copies have completed when this returns. The
  // returned tensors stay valid until the next call.
  CollectiveRequest stage_in(const CollectiveRequest& request);
  // Copies the results of `host` (from stage_in(request)) back into request's tensors and
  // waits until the copies have completed, so the staging buffers may be reused.
  void stage_out(const CollectiveRequest& request, const CollectiveRequest& host);

 private:
  void wait_for_copies();

  DeviceContext& device_;
  MemoryTracker tracker_;  // over the pinned staging allocator, counted as comm_buffers
  ScratchBuffer buffer_;
};

}  // namespace zt::comm
