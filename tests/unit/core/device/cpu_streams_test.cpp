// The CPU's DeviceStreams: the inline compute stream (complete events, waits that block the
// caller) and the worker copy stream (order, events, waits on other threads, errors).
#include "core/device/cpu_streams.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace zt {
namespace {

using std::chrono::milliseconds;

TEST(InlineCpuStream, EventsAreCompleteAndWaitBlocksTheCaller) {
  InlineCpuStream compute("cpu:0 compute");
  EXPECT_TRUE(compute.is_inline());
  EXPECT_TRUE(compute.record().is_complete());
  Event done;  // completed by another thread, as a communicator's thread would
  std::atomic<bool> written{false};
  std::thread comm([&] {
    std::this_thread::sleep_for(milliseconds(20));  // so that the wait below really waits
    written = true;
    done.complete();
  });
  compute.wait(cpu_device_event(done));
  EXPECT_TRUE(written.load()) << "wait returned before the event completed";
  comm.join();
}

TEST(CpuWorkerStream, RunsInOrderAndItsEventsFollowTheWork) {
  CpuWorkerStream copy("cpu:0 copy");
  EXPECT_FALSE(copy.is_inline());
  Event gate;
  copy.wait(cpu_device_event(gate));
  std::vector<int> order;  // written by the worker only until the event below completes
  for (int i = 0; i < 50; ++i) copy.enqueue([&order, i] { order.push_back(i); });
  const DeviceEvent after = copy.record();
  EXPECT_FALSE(after.is_complete()) << "the worker ran past the gate";
  gate.complete();
  after.synchronize();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  copy.synchronize();
}

TEST(CpuWorkerStream, SynchronizeRethrowsWhatATaskThrew) {
  CpuWorkerStream copy("cpu:0 copy");
  std::atomic<bool> later_ran{false};
  copy.enqueue([] { throw std::runtime_error("copy failed"); });
  copy.enqueue([&] { later_ran = true; });
  EXPECT_THROW(copy.synchronize(), std::runtime_error);
  EXPECT_TRUE(later_ran.load());
  EXPECT_NO_THROW(copy.synchronize()) << "an error is rethrown once";
}

}  // namespace
}  // namespace zt
