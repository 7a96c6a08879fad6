// CUDA streams and events as DeviceStream / DeviceEvent: CudaStream owns a non-blocking
// cudaStream_t (it never waits on the legacy default stream), events are recorded without
// timing (cheaper to record and to wait on). CUDA-free header: handles are void*.
#pragma once

#include <string>

#include "core/device/device_stream.h"

namespace zt {

class CudaStream final : public DeviceStream {
 public:
  CudaStream(Device device, std::string name);
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() override;  // queued work still runs; the stream is released after it

  const Device& device() const override { return device_; }
  const std::string& name() const override { return name_; }
  DeviceEvent record() override;
  // A CUDA event: cudaStreamWaitEvent, the host does not wait. A CPU event (a comm thread's
  // completion): the host waits for it here, and then there is nothing left to enqueue.
  void wait(const DeviceEvent& event) override;
  void synchronize() override;
  void* native_handle() const override { return stream_; }

 private:
  const Device device_;
  const std::string name_;
  void* stream_ = nullptr;  // cudaStream_t
};

// An event recorded now on `stream` (a cudaStream_t of `device`), for streams this layer does
// not own (a communicator's).
DeviceEvent record_cuda_event(const Device& device, void* stream);

// Makes later work on `stream` wait for `event`, as CudaStream::wait does.
void cuda_stream_wait(const Device& device, void* stream, const DeviceEvent& event);

}  // namespace zt
