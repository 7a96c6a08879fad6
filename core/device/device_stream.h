// DeviceStream and DeviceEvent: ordered queues of device work and the points recorded in
// them, so compute, communication and copies overlap the same way on the CPU and on CUDA.
// CUDA: cudaStream_t / cudaEvent_t. CPU: compute runs on the calling thread (an inline
// stream: a kernel has finished when its call returns), copies on an ordered worker thread
// (CpuWorkerStream), collectives on the communicator's own thread.
#pragma once

#include <memory>
#include <string>

#include "core/device.h"

namespace zt {

// What a backend's event is. Thread-safe.
class DeviceEventImpl {
 public:
  virtual ~DeviceEventImpl() = default;
  virtual bool is_complete() const = 0;
  virtual void synchronize() const = 0;                    // blocks the host until complete
  virtual void* native_handle() const { return nullptr; }  // cudaEvent_t on CUDA
};

// A point in a stream: complete once all work enqueued on that stream before it has run.
// A cheap, copyable handle; a default-constructed event is already complete.
class DeviceEvent {
 public:
  DeviceEvent() = default;
  explicit DeviceEvent(std::shared_ptr<const DeviceEventImpl> impl) : impl_(std::move(impl)) {}

  bool is_complete() const { return impl_ == nullptr || impl_->is_complete(); }
  void synchronize() const {
    if (impl_ != nullptr) impl_->synchronize();
  }
  const DeviceEventImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<const DeviceEventImpl> impl_;
};

class DeviceStream {
 public:
  virtual ~DeviceStream() = default;
  virtual const Device& device() const = 0;
  virtual const std::string& name() const = 0;

  // An event that completes when everything enqueued on this stream so far has run.
  virtual DeviceEvent record() = 0;
  // Work enqueued on this stream from now on runs after `event` completes. On a device this
  // does not block the host; on the inline CPU stream it blocks the calling thread.
  virtual void wait(const DeviceEvent& event) = 0;
  // Blocks the host until everything enqueued so far has run; rethrows a failure of it.
  virtual void synchronize() = 0;
  // Whether enqueued work runs on the caller's thread before the call returns (CPU compute).
  virtual bool is_inline() const { return false; }
  virtual void* native_handle() const { return nullptr; }  // cudaStream_t on CUDA
};

}  // namespace zt
