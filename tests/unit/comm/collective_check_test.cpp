// The collective check (Note [The collective check]) over real Gloo communicators, ranks as
// threads: "every" stops an op whose size differs on one rank before its data moves, on every
// rank, naming the group, the ranks and what each issued; "step" finds the same at the step's
// end and names the first op that differs (and a rank that issued an op fewer); a split is
// checked like its parent; ranks that agree pass with their results intact.
#include "comm/collective_check.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "core/memory_tracker.h"

namespace zt::comm {
namespace {

// Runs `body(rank, comm, check, tracker)` on two ranks of a checked world; returns each rank's
// CommError text (empty: none).
std::vector<std::string> run_two_ranks(
    CollectiveCheckMode mode,
    const std::function<void(int, Communicator&, CollectiveCheck&, MemoryTracker&)>& body) {
  MemoryStore store;
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      MemoryTracker tracker(Device::cpu());
      tracker.set_step(7);
      auto check = std::make_shared<CollectiveCheck>(mode, &tracker);
      CommOptions options;
      options.timeout = std::chrono::milliseconds(20000);
      options.status_interval = std::chrono::milliseconds(0);
      options.collective_check = check;
      auto comm = create_cpu_communicator(store, rank, 2, options);
      try {
        body(rank, *comm, *check, tracker);
      } catch (const CommError& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return errors;
}

Tensor filled(MemoryTracker& tracker, std::int64_t count, float value) {
  Tensor t = Tensor::zeros(Shape{count}, DType::kF32, tracker, MemoryCategory::kCommBuffers);
  for (std::int64_t i = 0; i < count; ++i) t.data_as<float>()[i] = value;
  return t;
}

TEST(CollectiveCheck, EveryStopsAnOpOfAnotherSizeBeforeItsDataMoves) {
  std::vector<float> after(2, -1.0f);
  const auto errors = run_two_ranks(
      CollectiveCheckMode::kEvery,
      [&](int rank, Communicator& comm, CollectiveCheck&, MemoryTracker& tracker) {
        Tensor agreed = filled(tracker, 4, 1.0f);
        comm.all_reduce(agreed, ReduceOp::kSum)->wait();
        EXPECT_EQ(agreed.data_as<float>()[0], 2.0f) << "ranks that agree reduce as before";
        // Rank 1's bucket is twice rank 0's.
        Tensor bucket = filled(tracker, rank == 0 ? 8 : 16, 1.0f);
        after[static_cast<std::size_t>(rank)] = 0.0f;
        comm.all_reduce(bucket, ReduceOp::kSum)->wait();
        after[static_cast<std::size_t>(rank)] = bucket.data_as<float>()[0];
      });
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& e = errors[static_cast<std::size_t>(rank)];
    EXPECT_NE(e.find("comm.check_collectives = \"every\""), std::string::npos) << e;
    EXPECT_NE(e.find("group world"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 0 all_reduce #1 (8 f32, sum, step 7)"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 1 all_reduce #1 (16 f32, sum, step 7)"), std::string::npos) << e;
    EXPECT_NE(e.find("before the op's data moved"), std::string::npos) << e;
    EXPECT_EQ(after[static_cast<std::size_t>(rank)], 0.0f) << "the all-reduce never ran";
  }
}

TEST(CollectiveCheck, StepNamesTheFirstOpThatDiffersAtTheStepsEnd) {
  const auto errors = run_two_ranks(
      CollectiveCheckMode::kStep,
      [&](int rank, Communicator& comm, CollectiveCheck& check, MemoryTracker& tracker) {
        Tensor a = filled(tracker, 4, 1.0f);
        comm.all_reduce(a, ReduceOp::kSum)->wait();
        check.end_step();  // the first step agrees
        // Equal in size, another reduction: nothing hangs, the data goes wrong.
        Tensor b = filled(tracker, 2, 1.0f);
        comm.all_reduce(b, rank == 0 ? ReduceOp::kSum : ReduceOp::kMax)->wait();
        check.end_step();
      });
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& e = errors[static_cast<std::size_t>(rank)];
    EXPECT_NE(e.find("comm.check_collectives = \"step\""), std::string::npos) << e;
    EXPECT_NE(e.find("rank 0 all_reduce #1 (2 f32, sum, step 7)"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 1 all_reduce #1 (2 f32, max, step 7)"), std::string::npos) << e;
  }
}

TEST(CollectiveCheck, TheMessageGroupsTheRanksByWhatTheyIssuedAndNamesOneThatIssuedNoMore) {
  OpFingerprint gather;
  gather.index = 3;
  gather.kind = CollectiveKind::kAllGather;
  gather.numel = 64;
  gather.step = 2;
  OpFingerprint scatter = gather;
  scatter.kind = CollectiveKind::kReduceScatter;
  scatter.reduce = static_cast<int>(ReduceOp::kAvg);
  const std::string text = collective_mismatch_message(
      "world/parameters", CollectiveCheckMode::kStep, {&gather, &scatter, &gather, nullptr});
  EXPECT_NE(text.find("group world/parameters"), std::string::npos) << text;
  EXPECT_NE(text.find("ranks 0 and 2 all_gather #3 (64 f32, step 2); rank 1 reduce_scatter #3 "
                      "(64 f32, avg, step 2); rank 3 issued nothing more"),
            std::string::npos)
      << text;
  EXPECT_EQ(OpFingerprint::from_words(scatter.words().data()), scatter);
}

TEST(CollectiveCheck, ASplitIsCheckedLikeItsParent) {
  const auto errors =
      run_two_ranks(CollectiveCheckMode::kEvery,
                    [&](int rank, Communicator& comm, CollectiveCheck&, MemoryTracker& tracker) {
                      std::unique_ptr<Communicator> both = comm.split(0, rank);
                      ASSERT_NE(both, nullptr);
                      Tensor t = filled(tracker, rank == 0 ? 4 : 6, 1.0f);
                      both->all_reduce(t, ReduceOp::kSum)->wait();
                    });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("group world/split-0/color-0"), std::string::npos) << e;
    EXPECT_NE(e.find("rank 1 all_reduce #0 (6 f32, sum, step 7)"), std::string::npos) << e;
  }
}

TEST(CollectiveCheck, RanksThatAgreePassAndOneRankIsNeverWrapped) {
  const auto errors =
      run_two_ranks(CollectiveCheckMode::kStep,
                    [&](int, Communicator& comm, CollectiveCheck& check, MemoryTracker& tracker) {
                      for (int step = 0; step < 3; ++step) {
                        Tensor t = filled(tracker, 5, 2.0f);
                        comm.all_reduce(t, ReduceOp::kSum)->wait();
                        EXPECT_EQ(t.data_as<float>()[4], 4.0f);
                        check.end_step();
                      }
                    });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  MemoryStore store;
  CommOptions options;
  options.collective_check = std::make_shared<CollectiveCheck>(CollectiveCheckMode::kEvery);
  auto single = create_cpu_communicator(store, 0, 1, options);
  MemoryTracker tracker(Device::cpu());
  Tensor t = filled(tracker, 3, 1.0f);
  single->all_reduce(t, ReduceOp::kSum)->wait();
  options.collective_check->end_step();
  EXPECT_EQ(t.data_as<float>()[0], 1.0f);
}

}  // namespace
}  // namespace zt::comm
