// FlightRecorder (Note [The flight recorder]): a ring of the last ops, oldest first, whose
// overwritten entries take no late updates; the trainer's step and phase read from the
// tracker; a JSON dump that escapes what it quotes; and two Gloo ranks as threads where one
// skips an all-gather: the other's record shows the all-gather it waits in as not completed
// and the ops before it as completed.
#include "comm/flight_recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "core/memory_tracker.h"

namespace zt::comm {
namespace {

TEST(FlightRecorder, KeepsTheLastOpsOldestFirstAndIgnoresUpdatesToOverwrittenOnes) {
  FlightRecorder recorder(3, 3);
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(recorder.enqueued("world/gradients", static_cast<std::uint64_t>(i + 1),
                                    CollectiveKind::kReduceScatter, 100 + i, DType::kBF16, -1));
  }
  recorder.started(ids[3]);
  recorder.ended(ids[3]);
  recorder.started(ids[4]);
  recorder.ended(ids[4], "connection reset by rank 1");
  recorder.ended(ids[0]);  // overwritten: no effect on the entry now in its slot
  EXPECT_EQ(recorder.recorded(), 5u);
  const std::vector<FlightEntry> entries = recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].id, 2u);
  EXPECT_EQ(entries[0].numel, 102);
  EXPECT_EQ(entries[0].state, FlightState::kQueued);
  EXPECT_LT(entries[0].started_s, 0.0);
  EXPECT_EQ(entries[1].state, FlightState::kCompleted);
  EXPECT_GE(entries[1].ended_s, entries[1].started_s);
  EXPECT_EQ(entries[2].state, FlightState::kFailed);
  EXPECT_EQ(entries[2].error, "connection reset by rank 1");
  EXPECT_EQ(entries[2].sequence_number, 5u);
  EXPECT_EQ(entries[2].group, "world/gradients");
  EXPECT_EQ(entries[2].dtype, DType::kBF16);
}

TEST(FlightRecorder, ReadsTheStepAndPhaseTheTrainerKeepsInTheTracker) {
  MemoryTracker tracker(Device::cpu());
  FlightRecorder recorder(0, 8, &tracker);
  tracker.set_step(7);
  tracker.set_phase("backward \"block\" 3");
  recorder.enqueued("world/parameters", 1, CollectiveKind::kBroadcast, 4, DType::kI32, 2);
  const FlightEntry entry = recorder.entries().at(0);
  EXPECT_EQ(entry.step, 7);
  EXPECT_EQ(entry.phase, "backward \"block\" 3");
  EXPECT_EQ(entry.root, 2);
  const std::string json = recorder.to_json("a reason with \"quotes\"\nand a line");
  EXPECT_NE(json.find("\"reason\": \"a reason with \\\"quotes\\\"\\nand a line\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"phase\": \"backward \\\"block\\\" 3\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kind\": \"broadcast\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"dtype\": \"i32\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"started_s\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"state\": \"queued\""), std::string::npos) << json;
}

// Rank 1 skips the all-gather rank 0 submits second: rank 0's wait times out, and its record
// holds the all-reduce as completed and the all-gather (the op it is stuck in) as not.
TEST(FlightRecorder, TheOpARankIsStuckInIsTheLastAndNotCompleted) {
  MemoryStore store;
  std::vector<std::shared_ptr<FlightRecorder>> recorders = {std::make_shared<FlightRecorder>(0),
                                                            std::make_shared<FlightRecorder>(1)};
  std::string rank0_error;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      CommOptions options;
      options.timeout = std::chrono::milliseconds(1500);
      options.status_interval = std::chrono::milliseconds(0);
      options.flight_recorder = recorders[static_cast<std::size_t>(rank)];
      // Before the communicator: an op still on its thread holds tensors of this tracker.
      MemoryTracker tracker(Device::cpu());
      auto comm = create_cpu_communicator(store, rank, 2, options);
      Tensor sum = Tensor::zeros(Shape{16}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
      comm->all_reduce(sum, ReduceOp::kSum)->wait();
      if (rank == 0) {
        Tensor part = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
        Tensor whole = Tensor::zeros(Shape{8}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
        try {
          comm->all_gather(part, whole)->wait();
        } catch (const CommError& e) {
          rank0_error = e.what();
        }
      } else {
        // Stays connected past rank 0's timeout, then leaves without the all-gather.
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  ASSERT_FALSE(rank0_error.empty()) << "rank 0 waited for an all-gather rank 1 never joined";
  const std::vector<FlightEntry> entries = recorders[0]->entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(entries[0].state, FlightState::kCompleted);
  EXPECT_EQ(entries[0].numel, 16);
  EXPECT_EQ(entries[1].kind, CollectiveKind::kAllGather);
  EXPECT_NE(entries[1].state, FlightState::kCompleted);
  EXPECT_EQ(entries[1].numel, 8);
  EXPECT_EQ(entries[1].group, "world");
  EXPECT_EQ(entries[1].sequence_number, entries[0].sequence_number + 1);
  const std::vector<FlightEntry> peer = recorders[1]->entries();
  ASSERT_EQ(peer.size(), 1u);
  EXPECT_EQ(peer[0].sequence_number, entries[0].sequence_number) << "the same op on both ranks";
}

}  // namespace
}  // namespace zt::comm
