// CpuStream runs work in order on its own thread; events order work across streams.
#include "core/stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace zt {
namespace {

using std::chrono::milliseconds;

TEST(CpuStream, RunsTasksInOrderOnAnotherThread) {
  CpuStream stream("compute");
  std::vector<int> order;  // written only by the stream's worker until synchronize
  std::thread::id worker_id;
  for (int i = 0; i < 100; ++i) {
    stream.enqueue([&order, &worker_id, i] {
      order.push_back(i);
      worker_id = std::this_thread::get_id();
    });
  }
  stream.synchronize();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_NE(worker_id, std::this_thread::get_id());
}

TEST(CpuStream, EventOrdersWorkAcrossStreams) {
  CpuStream producer("comm");
  CpuStream consumer("compute");
  Event gate;  // completed by the test, so the producer's work is held back deliberately
  std::atomic<int> value{0};
  producer.wait_event(gate);
  producer.enqueue([&] { value = 42; });
  Event produced = producer.record();
  consumer.wait_event(produced);
  std::atomic<int> seen{-1};
  consumer.enqueue([&] { seen = value.load(); });
  EXPECT_FALSE(produced.wait_for(milliseconds(20)));  // held back by the gate
  gate.complete();
  consumer.synchronize();
  EXPECT_EQ(seen.load(), 42);
  EXPECT_TRUE(produced.is_complete());
}

TEST(CpuStream, FirstExceptionIsRethrownBySynchronizeOnce) {
  CpuStream stream("copy");
  std::atomic<int> ran{0};
  stream.enqueue([] { throw std::runtime_error("first"); });
  stream.enqueue([] { throw std::runtime_error("second"); });
  stream.enqueue([&] { ran++; });
  try {
    stream.synchronize();
    FAIL() << "synchronize did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_EQ(ran.load(), 1);
  EXPECT_NO_THROW(stream.synchronize());
}

TEST(CpuStream, DestructorRunsQueuedWork) {
  std::atomic<int> ran{0};
  {
    CpuStream stream("drain");
    for (int i = 0; i < 10; ++i) stream.enqueue([&] { ran++; });
  }
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace zt
