// broadcast and barrier over real Gloo TCP on 127.0.0.1: any root reaches every rank, the
// tree sends n-1 copies in all, and no rank leaves a barrier before the last one arrives.
#include <gtest/gtest.h>

#include <array>
#include <latch>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::test_group;
using zt::testing::test_options;

TEST(Broadcast, FromANonZeroRootReachesEveryRank) {
  for (auto [n, root] : {std::array{3, 1}, std::array{4, 2}, std::array{4, 3}}) {
    const std::int64_t count = 100001;
    std::vector<std::uint64_t> bytes_sent(static_cast<std::size_t>(n));
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm = create_cpu_communicator(
          store, rank, n, test_options(test_group(std::to_string(n) + "/" + std::to_string(root))));
      auto data = rank == root ? zt::testing::bf16_values(root, count)
                               : std::vector<std::uint16_t>(static_cast<std::size_t>(count), 0);
      comm->broadcast(zt::testing::tensor_over(data, DType::kBF16), root)->wait();
      EXPECT_EQ(data, zt::testing::bf16_values(root, count)) << "rank " << rank;
      bytes_sent[static_cast<std::size_t>(rank)] =
          comm->counters().bytes(CollectiveKind::kBroadcast);
    });
    // A tree: n-1 copies of the buffer leave ranks in all, ceil(log2 n) of them from the root.
    std::uint64_t total = 0;
    for (auto bytes : bytes_sent) total += bytes;
    EXPECT_EQ(total, static_cast<std::uint64_t>((n - 1) * count * 2));
    EXPECT_EQ(bytes_sent[static_cast<std::size_t>(root)],
              static_cast<std::uint64_t>(2 * count * 2));
  }
}

TEST(Broadcast, MovesIntegerTokensUnchanged) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    std::vector<std::int32_t> tokens = {rank == 0 ? 50256 : 0, rank == 0 ? -7 : 0,
                                        rank == 0 ? 1 : 0};
    comm->broadcast(zt::testing::tensor_over(tokens, DType::kI32), 0)->wait();
    EXPECT_EQ(tokens, (std::vector<std::int32_t>{50256, -7, 1}));
  });
}

TEST(Barrier, NoRankLeavesBeforeTheLastArrives) {
  const int n = 3;
  std::latch others_checked(n - 1);
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    if (rank != 0) {
      // Rank 0 has not arrived (it waits for this latch), so the barrier cannot be complete.
      auto work = comm->barrier();
      EXPECT_THROW(work->wait(std::chrono::milliseconds(300)), TimeoutError);
      others_checked.count_down();
      work->wait();
      return;
    }
    others_checked.wait();
    comm->barrier()->wait();
    EXPECT_EQ(comm->counters().ops[static_cast<std::size_t>(CollectiveKind::kBarrier)], 1u);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kBarrier), 0u);
  });
}

}  // namespace
}  // namespace zt::comm
