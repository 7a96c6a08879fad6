// The comm stream's RAII, and CUDA events as DeviceEvents.
#include <memory>
#include <utility>

#include "comm/nccl/cuda_comm_stream_internal.h"
#include "comm/nccl/nccl_errors_internal.h"

namespace zt::comm {
namespace {

class CudaEventImpl final : public DeviceEventImpl {
 public:
  explicit CudaEventImpl(cudaEvent_t event) : event_(event) {}
  CudaEventImpl(const CudaEventImpl&) = delete;
  CudaEventImpl& operator=(const CudaEventImpl&) = delete;
  ~CudaEventImpl() override { cudaEventDestroy(event_); }

  bool is_complete() const override { return cudaEventQuery(event_) != cudaErrorNotReady; }
  void synchronize() const override {
    ZT_COMM_CUDA_CHECK(cudaEventSynchronize(event_), "waiting for a collective's completion");
  }
  void* native_handle() const override { return event_; }

 private:
  cudaEvent_t event_;
};

}  // namespace

CudaCommStream::CudaCommStream(int device_index, std::string where) : where_(std::move(where)) {
  ZT_COMM_CUDA_CHECK(cudaSetDevice(device_index), where_);
  ZT_COMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), where_);
}

CudaCommStream::~CudaCommStream() {
  cudaStreamSynchronize(stream_);  // errors were reported by the ops' Works
  cudaStreamDestroy(stream_);
}

void CudaCommStream::wait(const DeviceEvent& event) const {
  if (event.impl() != nullptr && event.impl()->native_handle() != nullptr) {
    auto* native = static_cast<cudaEvent_t>(event.impl()->native_handle());
    ZT_COMM_CUDA_CHECK(cudaStreamWaitEvent(stream_, native, 0), where_);
  } else {
    event.synchronize();
  }
}

DeviceEvent CudaCommStream::record() const {
  cudaEvent_t event = nullptr;
  ZT_COMM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), where_);
  auto impl = std::make_shared<const CudaEventImpl>(event);  // owns it from here on
  ZT_COMM_CUDA_CHECK(cudaEventRecord(event, stream_), where_);
  return DeviceEvent(std::move(impl));
}

cudaError_t query_event(const DeviceEvent& event) {
  if (event.impl() == nullptr || event.impl()->native_handle() == nullptr) {
    return event.is_complete() ? cudaSuccess : cudaErrorNotReady;
  }
  return cudaEventQuery(static_cast<cudaEvent_t>(event.impl()->native_handle()));
}

}  // namespace zt::comm
