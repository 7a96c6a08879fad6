// The fault-injection decorator (Note [Skipping an op on purpose]): it drops the first op of
// its kind in its step, on whichever of the rank's communicators comes first, returns a
// completed Work for it with the output untouched, and the flight recorder below never sees
// it; every other op goes through.
#include "comm/skipping_communicator.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/flight_recorder.h"
#include "comm/store/memory_store.h"
#include "core/memory_tracker.h"

namespace zt::comm {
namespace {

TEST(SkippingCommunicator, DropsTheFirstOpOfItsKindInItsStepAndNothingElse) {
  MemoryStore store;
  MemoryTracker tracker(Device::cpu());
  CommOptions options;
  options.flight_recorder = std::make_shared<FlightRecorder>(0, 64, &tracker);
  options.op_skip_fault = std::make_shared<OpSkipFault>(CollectiveKind::kAllGather, 3, &tracker);
  auto first = create_cpu_communicator(store, 0, 1, options);
  options.group_name = "other";
  auto second = create_cpu_communicator(store, 0, 1, options);

  Tensor part = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
  for (float& x : part.span<float>()) x = 2.0f;
  const auto gather = [&](Communicator& comm) {
    Tensor whole = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
    auto work = comm.all_gather(part, whole);
    work->wait();
    EXPECT_TRUE(work->is_completed());
    return whole.data_as<float>()[0];
  };
  tracker.set_step(2);
  EXPECT_EQ(gather(*first), 2.0f);  // another step: issued
  tracker.set_step(3);
  Tensor sum = Tensor::zeros(Shape{4}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
  first->all_reduce(sum, ReduceOp::kSum)->wait();  // another kind: issued
  EXPECT_EQ(gather(*second), 0.0f);                // dropped: the output keeps its zeros
  EXPECT_EQ(gather(*first), 2.0f);                 // once only, over every communicator
  EXPECT_EQ(gather(*second), 2.0f);

  const std::vector<FlightEntry> entries = options.flight_recorder->entries();
  ASSERT_EQ(entries.size(), 4u);  // the dropped op never reached the recorder
  EXPECT_EQ(entries[1].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(entries[2].group, "world");
  EXPECT_EQ(entries[2].sequence_number, 3u);
  EXPECT_EQ(entries[3].group, "other");
  EXPECT_EQ(entries[3].sequence_number, 1u);  // the other communicator's first issued op
}

}  // namespace
}  // namespace zt::comm
