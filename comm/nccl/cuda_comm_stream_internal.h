// The NCCL communicator's own CUDA stream and the events it records there. An event is a
// DeviceEvent whose native handle is its cudaEvent_t, so the device's compute stream can
// wait on it with cudaStreamWaitEvent.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/device/device_stream.h"

namespace zt::comm {

class CudaCommStream {
 public:
  // A non-blocking stream on CUDA device `device_index` (made current on this thread).
  CudaCommStream(int device_index, std::string where);
  CudaCommStream(const CudaCommStream&) = delete;
  CudaCommStream& operator=(const CudaCommStream&) = delete;
  ~CudaCommStream();  // waits for the stream's work, then destroys it

  cudaStream_t get() const { return stream_; }
  // Work enqueued from now on runs after `event`: on the device for a CUDA event, after a
  // host wait for any other (a CPU event completes on a host thread).
  void wait(const DeviceEvent& event) const;
  // An event recorded now on the stream.
  DeviceEvent record() const;

 private:
  const std::string where_;  // "on rank 1 of 4, group world/gradients", for errors
  cudaStream_t stream_ = nullptr;
};

// Whether `event` has completed: cudaSuccess, cudaErrorNotReady, or the error it ran into.
cudaError_t query_event(const DeviceEvent& event);

}  // namespace zt::comm
