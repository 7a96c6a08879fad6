// The CPU's streams. Compute is inline: a CPU kernel runs on the calling thread and has
// finished when its call returns, so handing it to another thread would only add a wake-up
// per kernel. Copies (host offload) run on an ordered worker thread, and collectives on the
// communicator's own thread; both complete events the inline stream can wait on.
#pragma once

#include <string>

#include "core/device/device_stream.h"
#include "core/stream.h"

namespace zt {

// Runs nothing itself: its events are complete when recorded; wait() blocks the caller.
class InlineCpuStream final : public DeviceStream {
 public:
  explicit InlineCpuStream(std::string name) : name_(std::move(name)) {}
  const Device& device() const override { return device_; }
  const std::string& name() const override { return name_; }
  DeviceEvent record() override { return DeviceEvent(); }
  void wait(const DeviceEvent& event) override { event.synchronize(); }
  void synchronize() override {}
  bool is_inline() const override { return true; }

 private:
  const Device device_ = Device::cpu();
  const std::string name_;
};

// An ordered worker thread (CpuStream) as a DeviceStream, plus enqueue() for host tasks.
class CpuWorkerStream final : public DeviceStream {
 public:
  explicit CpuWorkerStream(std::string name) : worker_(std::move(name)) {}
  const Device& device() const override { return device_; }
  const std::string& name() const override { return worker_.name(); }
  DeviceEvent record() override;
  void wait(const DeviceEvent& event) override;
  void synchronize() override { worker_.synchronize(); }
  // Runs `task` on the worker after everything enqueued before it.
  void enqueue(std::function<void()> task) { worker_.enqueue(std::move(task)); }

 private:
  const Device device_ = Device::cpu();
  CpuStream worker_;
};

// The DeviceEvent of a CPU Event (completed by whichever thread ran the work).
DeviceEvent cpu_device_event(const Event& event);

}  // namespace zt
