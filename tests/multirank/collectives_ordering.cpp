// Submission order: sequence numbers increase by one per op and name it, and many ops in
// flight at once (of every kind and size) complete in submission order with right results.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::test_group;
using zt::testing::test_options;

TEST(Ordering, SequenceNumbersIncreaseByOneAndNameTheOp) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    std::vector<float> data(1024, 1.0f);
    auto t = zt::testing::tensor_over(data, DType::kF32);
    auto first = comm->all_reduce(t, ReduceOp::kSum);
    auto second = comm->barrier();
    auto third = comm->broadcast(t, 1);
    EXPECT_EQ(first->sequence_number(), 1u);
    EXPECT_EQ(second->sequence_number(), 2u);
    EXPECT_EQ(third->sequence_number(), 3u);
    EXPECT_EQ(first->description(),
              "all_reduce #1 (4 KiB f32, sum) on rank " + std::to_string(rank) + " of 2");
    EXPECT_EQ(third->description(),
              "broadcast #3 (4 KiB f32, root 1) on rank " + std::to_string(rank) + " of 2");
    third->wait();
    EXPECT_TRUE(first->is_completed());
    EXPECT_TRUE(second->is_completed());
  });
}

TEST(Ordering, ManyOpsInFlightCompleteInSubmissionOrder) {
  const int n = 3;
  const int rounds = 6;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    // Sizes differ per op, so a message of one op landing in another would show.
    std::vector<std::vector<float>> reduced(rounds), inputs(rounds), shards(rounds),
        gathered(rounds);
    std::vector<std::shared_ptr<Work>> works;
    for (int k = 0; k < rounds; ++k) {
      const std::int64_t count = 1000 + 4099 * k;
      reduced[k] = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
      inputs[k] = reduced[k];
      shards[k].assign(static_cast<std::size_t>(shard_range(count, n, rank).count), 0.0f);
      gathered[k].assign(static_cast<std::size_t>(count), 0.0f);
      works.push_back(
          comm->all_reduce(zt::testing::tensor_over(reduced[k], DType::kF32), ReduceOp::kSum));
      works.push_back(comm->reduce_scatter(zt::testing::tensor_over(inputs[k], DType::kF32),
                                           zt::testing::tensor_over(shards[k], DType::kF32),
                                           ReduceOp::kMax));
      // Gather the reduce-scatter's result: depends on the op before it having completed.
      works.push_back(comm->all_gather(zt::testing::tensor_over(shards[k], DType::kF32),
                                       zt::testing::tensor_over(gathered[k], DType::kF32)));
    }
    works.back()->wait();
    for (const auto& work : works) EXPECT_TRUE(work->is_completed()) << work->description();
    for (const auto& work : works) work->wait();
    for (int k = 0; k < rounds; ++k) {
      const auto count = static_cast<std::int64_t>(reduced[k].size());
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        float sum = 0, best = -1e30f;
        for (int r = 0; r < n; ++r) {
          sum += zt::testing::integer_pattern(r, i);
          best = std::max(best, zt::testing::integer_pattern(r, i));
        }
        const auto at = static_cast<std::size_t>(i);
        wrong += reduced[k][at] != sum || gathered[k][at] != best;
      }
      EXPECT_EQ(wrong, 0) << "round " << k;
    }
  });
}

}  // namespace
}  // namespace zt::comm
