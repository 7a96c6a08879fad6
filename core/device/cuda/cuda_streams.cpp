// CudaStream and the CUDA DeviceEventImpl.
#include "core/device/cuda/cuda_streams.h"

#include <cuda_runtime.h>

#include <memory>

#include "core/device/cuda/cuda_check.h"

namespace zt {
namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

class CudaEventImpl final : public DeviceEventImpl {
 public:
  CudaEventImpl(const Device& device, cudaStream_t stream) : device_(device) {
    CurrentDevice current(device.index);
    ZT_CORE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming),
                       "an event on " + device.to_string());
    const cudaError_t status = cudaEventRecord(event_, stream);
    if (status != cudaSuccess) {
      cudaEventDestroy(event_);
      detail::check_core_cuda(status, "cudaEventRecord", "an event on " + device.to_string());
    }
  }
  ~CudaEventImpl() override { cudaEventDestroy(event_); }
  CudaEventImpl(const CudaEventImpl&) = delete;
  CudaEventImpl& operator=(const CudaEventImpl&) = delete;

  bool is_complete() const override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    ZT_CORE_CUDA_CHECK(status, "an event on " + device_.to_string());
    return true;
  }
  void synchronize() const override {
    ZT_CORE_CUDA_CHECK(cudaEventSynchronize(event_),
                       "waiting for an event on " + device_.to_string());
  }
  void* native_handle() const override { return event_; }

 private:
  const Device device_;
  cudaEvent_t event_ = nullptr;
};

}  // namespace

DeviceEvent record_cuda_event(const Device& device, void* stream) {
  return DeviceEvent(std::make_shared<const CudaEventImpl>(device, as_stream(stream)));
}

void cuda_stream_wait(const Device& device, void* stream, const DeviceEvent& event) {
  const DeviceEventImpl* impl = event.impl();
  if (impl == nullptr) return;  // a default event is complete
  if (impl->native_handle() == nullptr) {
    impl->synchronize();  // completed by a host thread: nothing a CUDA stream can wait on
    return;
  }
  CurrentDevice current(device.index);
  ZT_CORE_CUDA_CHECK(
      cudaStreamWaitEvent(as_stream(stream), static_cast<cudaEvent_t>(impl->native_handle()), 0),
      "a stream of " + device.to_string() + " waiting on an event");
}

CudaStream::CudaStream(Device device, std::string name) : device_(device), name_(std::move(name)) {
  CurrentDevice current(device.index);
  cudaStream_t stream = nullptr;
  ZT_CORE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                     "the " + name_ + " stream");
  stream_ = stream;
}

CudaStream::~CudaStream() { cudaStreamDestroy(as_stream(stream_)); }

DeviceEvent CudaStream::record() { return record_cuda_event(device_, stream_); }

void CudaStream::wait(const DeviceEvent& event) { cuda_stream_wait(device_, stream_, event); }

void CudaStream::synchronize() {
  CurrentDevice current(device_.index);
  ZT_CORE_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream_)),
                     "synchronizing the " + name_ + " stream");
}

}  // namespace zt
