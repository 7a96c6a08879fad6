// A staged HostScalar's slot goes back to the pool only after the device's write into it is
// done (Note [A staged slot outlives its copy]): dropped unread with its copy still queued,
// the last handle waits for the written() event, or for the writer stream when the slot went
// to the device without one; a value that was read costs no wait.
#include "core/device/host_scalar.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device/device_allocator.h"
#include "core/device/device_stream.h"

namespace zt {
namespace {

// What happened, in order: "allocate", "deallocate", "event wait", "stream wait".
using Log = std::vector<std::string>;

class LoggingAllocator final : public DeviceAllocator {
 public:
  explicit LoggingAllocator(Log& log) : log_(log) {}
  const Device& device() const override { return device_; }
  void* allocate(std::size_t bytes) override {
    log_.push_back("allocate");
    blocks_.push_back(std::make_unique<double[]>(bytes / sizeof(double) + 1));
    return blocks_.back().get();
  }
  void deallocate(void*, std::size_t) noexcept override { log_.push_back("deallocate"); }
  void fill_zero(void*, std::size_t) override {}
  void release_cached() noexcept override {}
  AllocatorStats stats() const override { return {}; }

 private:
  Log& log_;
  Device device_ = Device::cpu();
  std::vector<std::unique_ptr<double[]>> blocks_;
};

// An event of a copy still queued until someone waits for it; a failing one throws.
class QueuedEvent final : public DeviceEventImpl {
 public:
  QueuedEvent(Log& log, bool fails) : log_(log), fails_(fails) {}
  bool is_complete() const override { return done_; }
  void synchronize() const override {
    log_.push_back("event wait");
    if (fails_) throw std::runtime_error("the device is gone");
    done_ = true;
  }

 private:
  Log& log_;
  bool fails_;
  mutable bool done_ = false;
};

class LoggingStream final : public DeviceStream {
 public:
  explicit LoggingStream(Log& log) : log_(log) {}
  const Device& device() const override { return device_; }
  const std::string& name() const override { return name_; }
  DeviceEvent record() override { return {}; }
  void wait(const DeviceEvent&) override {}
  void synchronize() override { log_.push_back("stream wait"); }

 private:
  Log& log_;
  Device device_ = Device::cpu();
  std::string name_ = "logging";
};

TEST(HostScalar, DroppedUnreadWaitsForItsCopyBeforeTheSlotGoesBack) {
  Log log;
  LoggingAllocator allocator(log);
  LoggingStream stream(log);
  {
    HostScalar scalar = HostScalar::staged(allocator, stream);
    ASSERT_NE(scalar.data(), nullptr);
    scalar.written(DeviceEvent(std::make_shared<QueuedEvent>(log, false)));
  }
  EXPECT_EQ(log, (Log{"allocate", "event wait", "deallocate"}));
}

TEST(HostScalar, HandedToTheDeviceWithoutAnEventWaitsForTheWriterStream) {
  Log log;
  LoggingAllocator allocator(log);
  LoggingStream stream(log);
  {
    HostScalar scalar = HostScalar::staged(allocator, stream);
    ASSERT_NE(scalar.data(), nullptr);  // a copy may be queued; written() never came
  }
  EXPECT_EQ(log, (Log{"allocate", "stream wait", "deallocate"}));
}

TEST(HostScalar, AReadValueAndAnUnusedSlotGoBackWithoutAWait) {
  Log log;
  LoggingAllocator allocator(log);
  LoggingStream stream(log);
  {
    HostScalar scalar = HostScalar::staged(allocator, stream);
    scalar.data();
    scalar.written(DeviceEvent(std::make_shared<QueuedEvent>(log, false)));
    EXPECT_EQ(static_cast<double>(scalar), 0.0);  // the read waits once
  }
  { const HostScalar unused = HostScalar::staged(allocator, stream); }
  EXPECT_EQ(log, (Log{"allocate", "event wait", "deallocate", "allocate", "deallocate"}));
}

TEST(HostScalar, AFailedWaitKeepsTheSlotOutOfThePool) {
  Log log;
  LoggingAllocator allocator(log);
  LoggingStream stream(log);
  {
    HostScalar scalar = HostScalar::staged(allocator, stream);
    scalar.data();
    scalar.written(DeviceEvent(std::make_shared<QueuedEvent>(log, true)));
  }
  EXPECT_EQ(log, (Log{"allocate", "event wait"}));
}

TEST(HostScalar, CopiesShareOneSlotReturnedWithTheLast) {
  Log log;
  LoggingAllocator allocator(log);
  LoggingStream stream(log);
  {
    HostScalar first = HostScalar::staged(allocator, stream);
    first.data();
    first.written(DeviceEvent(std::make_shared<QueuedEvent>(log, false)));
    const HostScalar second = first;
    first = HostScalar(1.0);
    EXPECT_EQ(log, (Log{"allocate"}));
  }
  EXPECT_EQ(log, (Log{"allocate", "event wait", "deallocate"}));
}

}  // namespace
}  // namespace zt
