// CPU events over core/stream.h's Event, and the worker stream's record and wait.
#include "core/device/cpu_streams.h"

#include <memory>

namespace zt {
namespace {

class CpuEventImpl final : public DeviceEventImpl {
 public:
  explicit CpuEventImpl(Event event) : event_(std::move(event)) {}
  bool is_complete() const override { return event_.is_complete(); }
  void synchronize() const override { event_.wait(); }

 private:
  Event event_;
};

}  // namespace

DeviceEvent cpu_device_event(const Event& event) {
  return DeviceEvent(std::make_shared<const CpuEventImpl>(event));
}

DeviceEvent CpuWorkerStream::record() { return cpu_device_event(worker_.record()); }

void CpuWorkerStream::wait(const DeviceEvent& event) {
  worker_.enqueue([event] { event.synchronize(); });
}

}  // namespace zt
