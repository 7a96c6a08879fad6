// Work's waiting rules (Note [Waiting on a collective]): host ops block wait() until they
// completed; device ops release wait() once enqueued and order the consumer stream after
// their completion event; synchronize() waits for the completion itself; errors and
// timeouts name the op either way.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "comm/work.h"
#include "core/device/cpu_streams.h"
#include "core/error.h"
#include "core/stream.h"

namespace zt::comm {
namespace {

using std::chrono::milliseconds;

constexpr const char* kDescription = "all_reduce #7 (4 KiB f32, sum) on rank 1 of 2";

TEST(WorkWait, HostOpWaitBlocksUntilCompletedAndTimesOutNamingTheOp) {
  Work work(7, kDescription, milliseconds(5000));
  try {
    work.wait(milliseconds(50));
    ADD_FAILURE() << "wait returned before the op completed";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(kDescription) + " did not complete within 50"),
              std::string::npos)
        << e.what();
  }
  std::thread completer([&] { work.mark_completed(); });
  work.wait();
  EXPECT_TRUE(work.is_completed());
  EXPECT_TRUE(work.completion_event().is_complete());  // host ops: nothing left on a device
  completer.join();
}

TEST(WorkWait, DeviceOpWaitReturnsOnceEnqueuedAndOrdersTheConsumerStream) {
  CpuWorkerStream consumer("consumer");
  Work work(7, kDescription, milliseconds(5000), milliseconds(0), &consumer);
  const Event done_on_device;  // stands in for the comm stream's event
  work.mark_enqueued(cpu_device_event(done_on_device));
  work.wait();  // returns: the op is enqueued
  EXPECT_FALSE(work.is_completed());
  std::atomic<bool> consumer_ran{false};
  consumer.enqueue([&] { consumer_ran = true; });
  const DeviceEvent consumer_done = consumer.record();
  // The consumer's work is queued behind the op's completion, which has not happened: it
  // stays unrun however long we look (a tenth of a second here).
  const auto look_until = std::chrono::steady_clock::now() + milliseconds(100);
  while (std::chrono::steady_clock::now() < look_until) {
    ASSERT_FALSE(consumer_ran.load());
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_FALSE(consumer_done.is_complete());
  try {
    work.synchronize(milliseconds(50));
    ADD_FAILURE() << "synchronize returned before the op completed";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find(kDescription), std::string::npos) << e.what();
  }
  done_on_device.complete();
  work.mark_completed();
  work.synchronize();
  consumer.synchronize();
  EXPECT_TRUE(consumer_ran.load());
}

TEST(WorkWait, FailureAfterEnqueueIsRethrownByWaitAndSynchronize) {
  Work work(7, kDescription, milliseconds(5000));
  work.mark_enqueued(DeviceEvent());
  work.mark_completed(std::make_exception_ptr(TimeoutError("did not complete on cuda:0")));
  for (int call = 0; call < 2; ++call) {
    try {
      if (call == 0) {
        work.wait();
      } else {
        work.synchronize();
      }
      ADD_FAILURE() << "a failed op returned normally";
    } catch (const TimeoutError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string(kDescription) + " failed: did not complete on cuda:0");
    }
  }
}

TEST(WorkWait, EnqueuedTwiceIsABug) {
  Work work(7, kDescription, milliseconds(5000));
  work.mark_enqueued(DeviceEvent());
  EXPECT_THROW(work.mark_enqueued(DeviceEvent()), InternalError);
}

}  // namespace
}  // namespace zt::comm
