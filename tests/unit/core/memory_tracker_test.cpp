// MemoryTracker accounting per category, peaks with their phase, and the capacity error.
#include "core/memory_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/config/byte_size.h"
#include "core/error.h"

namespace zt {
namespace {

TEST(MemoryTracker, CountsCurrentAndPeakPerCategory) {
  MemoryTracker tracker(Device::cpu());
  {
    Allocation params = tracker.allocate(1000, MemoryCategory::kParameters);
    Allocation grads = tracker.allocate(400, MemoryCategory::kGradients);
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kParameters), 1000);
    EXPECT_EQ(tracker.total_current_bytes(), 1400);
    {
      Allocation act = tracker.allocate(600, MemoryCategory::kActivations);
      EXPECT_EQ(tracker.total_peak_bytes(), 2000);
    }
    EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 0);
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kActivations), 600);
  }
  EXPECT_EQ(tracker.total_current_bytes(), 0);
  EXPECT_EQ(tracker.total_peak_bytes(), 2000);
}

TEST(MemoryTracker, PeakRemembersPhaseAndWhatWasLive) {
  MemoryTracker tracker(Device::cpu());
  Allocation params = tracker.allocate(100, MemoryCategory::kParameters);
  tracker.set_phase("forward block 1");
  Allocation act = tracker.allocate(50, MemoryCategory::kActivations);
  tracker.set_phase("optimizer step");
  Allocation small = tracker.allocate(10, MemoryCategory::kOptimizerStates);
  act = Allocation();
  const MemorySnapshot snap = tracker.snapshot();
  EXPECT_EQ(snap.total_peak_bytes, 160);
  EXPECT_EQ(snap.total_peak_phase, "optimizer step");
  EXPECT_EQ(snap.at_total_peak_bytes[static_cast<std::size_t>(MemoryCategory::kActivations)], 50);
  tracker.reset_peaks();
  EXPECT_EQ(tracker.total_peak_bytes(), 110);
}

TEST(MemoryTracker, CapacityErrorListsLiveBytesPerCategory) {
  MemoryTracker tracker(Device::cpu(), 1 << 20);  // 1 MiB
  Allocation params = tracker.allocate(600 << 10, MemoryCategory::kParameters);
  tracker.set_phase("backward block 0");
  try {
    Allocation grads = tracker.allocate(500 << 10, MemoryCategory::kGradients);
    FAIL() << "allocation past the capacity succeeded";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("gradients"), std::string::npos) << message;
    EXPECT_NE(message.find("parameters 600 KiB"), std::string::npos) << message;
    EXPECT_NE(message.find("backward block 0"), std::string::npos) << message;
    EXPECT_NE(message.find("runtime.device_memory_limit"), std::string::npos) << message;
    EXPECT_NE(message.find("1 MiB"), std::string::npos) << message;
  }
  // The refused allocation left no trace.
  EXPECT_EQ(tracker.total_current_bytes(), 600 << 10);
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kGradients), 0);
  // Exactly up to the capacity is fine.
  Allocation rest = tracker.allocate((1 << 20) - (600 << 10), MemoryCategory::kWorkspace);
  EXPECT_EQ(tracker.total_current_bytes(), 1 << 20);
}

TEST(MemoryTracker, OomAdviceIsAppended) {
  MemoryTracker tracker(Device::cpu(), 1000);
  tracker.set_oom_advice([] { return std::string("try zero.stage = 3"); });
  EXPECT_THROW(
      {
        try {
          tracker.allocate(2000, MemoryCategory::kActivations);
        } catch (const OutOfMemoryError& e) {
          EXPECT_NE(std::string(e.what()).find("try zero.stage = 3"), std::string::npos);
          throw;
        }
      },
      OutOfMemoryError);
}

TEST(MemoryTracker, AllocationsAreAlignedAndZeroed) {
  MemoryTracker tracker(Device::cpu());
  Allocation a = tracker.allocate(100, MemoryCategory::kWorkspace);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % MemoryTracker::kAlignment, 0u);
  const auto* bytes = static_cast<const unsigned char*>(a.data());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bytes[i], 0);
  Allocation moved = std::move(a);
  EXPECT_EQ(tracker.total_current_bytes(), 100);
}

TEST(MemoryTracker, ConcurrentAllocationsBalance) {
  MemoryTracker tracker(Device::cpu());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&tracker] {
      for (int i = 0; i < 500; ++i) {
        Allocation a = tracker.allocate(64, MemoryCategory::kCommBuffers);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(tracker.total_current_bytes(), 0);
  EXPECT_GE(tracker.peak_bytes(MemoryCategory::kCommBuffers), 64);
  EXPECT_LE(tracker.peak_bytes(MemoryCategory::kCommBuffers), 4 * 64);
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

// More than the host has is refused before any allocation, with the message a device
// capacity refusal gives (never a bare std::bad_alloc or the OOM killer).
TEST(MemoryTrackerHost, AllocationPastPhysicalMemoryIsRefusedBeforeAllocating) {
  const std::int64_t host = host_physical_memory_bytes();
  ASSERT_GT(host, 0) << "sysconf does not report physical memory";
  MemoryTracker tracker(Device::cpu());
  Allocation live = tracker.allocate(4096, MemoryCategory::kOptimizerStates);
  tracker.set_phase("optimizer step");
  try {
    tracker.allocate(host, MemoryCategory::kParameters);
    FAIL() << "an allocation the size of physical memory was accepted";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    for (const std::string& part :
         {std::string("out of host memory on cpu:0"), std::string("of parameters"),
          std::string("during 'optimizer step'"), std::string("physical memory"),
          std::string("optimizer_states 4 KiB"), std::string("zero.stage = 3")}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " missing in: " << message;
    }
  }
  EXPECT_EQ(tracker.total_current_bytes(), 4096);
  EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kParameters), 0) << "the refusal left a trace";
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

TEST(MemoryTrackerHost, BadAllocOutsideTheTrackerIsExplainedWithWhatIsLive) {
  MemoryTracker tracker(Device::cpu());
  Allocation live = tracker.allocate(2048, MemoryCategory::kActivations);
  tracker.set_phase("forward block 1");
  const std::string message = tracker.untracked_allocation_failed().what();
  EXPECT_NE(message.find("out of host memory on cpu:0"), std::string::npos) << message;
  EXPECT_NE(message.find("std::bad_alloc"), std::string::npos) << message;
  EXPECT_NE(message.find("during 'forward block 1'"), std::string::npos) << message;
  EXPECT_NE(message.find("activations 2 KiB"), std::string::npos) << message;
  EXPECT_NE(message.find("zero.stage = 3"), std::string::npos) << message;
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

TEST(MemoryTrackerTimeline, RecordsNamedEventsPerStepAndStopsWhenFull) {
  MemoryTracker tracker(Device::cpu());
  Allocation before = tracker.allocate(64, MemoryCategory::kWorkspace);  // not recorded
  tracker.start_timeline(3);
  tracker.set_step(1);
  tracker.set_phase("forward block 0");
  {
    const ScopedAllocationName name("activations of block 0");
    Allocation a = tracker.allocate(128, MemoryCategory::kActivations);
  }
  tracker.record(MemoryCategory::kCommBuffers, 32);  // the third event fills the timeline
  tracker.unrecord(MemoryCategory::kCommBuffers, 32);
  const std::vector<MemoryEvent> events = tracker.timeline();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].delta_bytes, 128);
  EXPECT_EQ(events[0].name, "activations of block 0");
  EXPECT_EQ(events[0].phase, "forward block 0");
  EXPECT_EQ(events[0].step, 1);
  EXPECT_EQ(events[0].total_bytes, 64 + 128);
  EXPECT_EQ(events[1].delta_bytes, -128);
  EXPECT_EQ(events[1].category_bytes, 0);
  EXPECT_EQ(events[2].name, "");
  EXPECT_TRUE(tracker.timeline_truncated());
  tracker.stop_timeline();
}

TEST(MemoryTrackerTimeline, OffByDefault) {
  MemoryTracker tracker(Device::cpu());
  Allocation a = tracker.allocate(128, MemoryCategory::kActivations);
  EXPECT_TRUE(tracker.timeline().empty());
  EXPECT_FALSE(tracker.timeline_truncated());
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

TEST(MemoryTrackerOutOfMemory, FirstLineSaysWhatFailedAndTheRestIsShortReadableLines) {
  MemoryTracker tracker(Device::cpu(), 86 << 20);
  tracker.set_phase("initialization");
  std::vector<Allocation> live;
  for (int i = 0; i < 7; ++i) {
    const ScopedAllocationName name("model states (ZeRO shards)");
    live.push_back(tracker.allocate(12389 << 10, MemoryCategory::kOptimizerStates));
  }
  tracker.set_phase("backward block 9");
  try {
    (void)tracker.allocate(3085 << 10, MemoryCategory::kCommBuffers);
    FAIL() << "over capacity";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    const std::string first = message.substr(0, message.find('\n'));
    EXPECT_EQ(first,
              "out of memory on cpu:0: allocating 3.01 MiB of comm_buffers during 'backward "
              "block 9' would exceed the device capacity of 86 MiB "
              "(runtime.device_memory_limit); 84.7 MiB in use.")
        << message;
    EXPECT_EQ(message.find("12389 KiB"), std::string::npos) << "sizes in KiB past 1 MiB";
    EXPECT_NE(message.find("  in use: optimizer_states 84.7 MiB\n"), std::string::npos) << message;
    EXPECT_NE(message.find("    12.1 MiB  optimizer_states  model states (ZeRO shards)  "
                           "initialization\n"),
              std::string::npos)
        << message;
    std::size_t rows = 0;
    for (std::size_t at = message.find("  optimizer_states  model states"); at != std::string::npos;
         at = message.find("  optimizer_states  model states", at + 1)) {
      ++rows;
    }
    EXPECT_EQ(rows, 5u) << "the five largest, one row each: " << message;
    std::size_t longest = 0;
    for (std::size_t start = 0; start < message.size();) {
      const std::size_t end = std::min(message.find('\n', start), message.size());
      longest = std::max(longest, end - start);
      start = end + 1;
    }
    EXPECT_LE(longest, 200u) << "one line too long to read: " << message;
  }
}

TEST(MemoryTrackerOutOfMemory, NamesTheLargestLiveTensors) {
  MemoryTracker tracker(Device::cpu(), 4096);
  tracker.set_phase("initialization");
  Allocation small = tracker.allocate(256, MemoryCategory::kWorkspace);
  Allocation large = [&] {
    const ScopedAllocationName name("flat parameters");
    return tracker.allocate(2048, MemoryCategory::kParameters);
  }();
  tracker.set_phase("forward block 1");
  try {
    (void)tracker.allocate(4096, MemoryCategory::kActivations);
    FAIL() << "over capacity";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\n  largest live allocations:\n"
                           "     size  category    name             made during\n"
                           "    2 KiB  parameters  flat parameters  initialization\n"
                           "    256 B  workspace   -                initialization"),
              std::string::npos)
        << message;
  }
  large = Allocation();
  try {
    (void)tracker.allocate(4096, MemoryCategory::kActivations);
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).find("flat parameters"), std::string::npos) << "freed";
  }
}

}  // namespace
}  // namespace zt
