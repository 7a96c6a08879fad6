// Communicator::split over real Gloo TCP on 127.0.0.1: a world of 4 on two nodes of 2, split
// into node-local groups and into cross-node groups, each running every collective on its
// own; ranks ordered by (key, parent rank); kNoColor ranks left out; splits of splits.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/recording_communicator.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::tensor_over;
using zt::testing::test_group;
using zt::testing::test_options;

constexpr int kWorld = 4;

// Runs all_reduce, reduce_scatter, all_gather and broadcast on `group`, whose ranks are the
// world ranks `members` (in group rank order), and checks each against its closed form.
void check_collectives(Communicator& group, const std::vector<int>& members, int world_rank) {
  const int n = group.world_size();
  ASSERT_EQ(n, static_cast<int>(members.size()));
  ASSERT_EQ(members[static_cast<std::size_t>(group.rank())], world_rank);
  const std::int64_t count = 10;  // uneven over 3 ranks too

  // all_reduce: element i sums world_rank * 100 + i over the members.
  std::vector<float> values(count);
  for (std::int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(world_rank * 100 + i);
  group.all_reduce(tensor_over(values, DType::kF32), ReduceOp::kSum)->wait();
  const int member_sum = std::accumulate(members.begin(), members.end(), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(values[i], static_cast<float>(member_sum * 100 + n * i)) << "all_reduce " << i;
  }

  // reduce_scatter: this rank's shard of the same sums.
  for (std::int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(world_rank * 100 + i);
  const ShardRange own = shard_range(count, n, group.rank());
  std::vector<float> shard(static_cast<std::size_t>(own.count));
  group
      .reduce_scatter(tensor_over(values, DType::kF32), tensor_over(shard, DType::kF32),
                      ReduceOp::kSum)
      ->wait();
  for (std::int64_t i = 0; i < own.count; ++i) {
    EXPECT_EQ(shard[i], static_cast<float>(member_sum * 100 + n * (own.offset + i)))
        << "reduce_scatter " << i;
  }

  // all_gather: element i from the group rank whose shard holds it, tagged with its world rank.
  for (std::int64_t i = 0; i < own.count; ++i)
    shard[i] = static_cast<float>(world_rank * 1000 + own.offset + i);
  std::vector<float> gathered(count, -1.0f);
  group.all_gather(tensor_over(shard, DType::kF32), tensor_over(gathered, DType::kF32))->wait();
  for (int r = 0; r < n; ++r) {
    const ShardRange range = shard_range(count, n, r);
    for (std::int64_t i = range.offset; i < range.offset + range.count; ++i) {
      EXPECT_EQ(gathered[i], static_cast<float>(members[r] * 1000 + i)) << "all_gather " << i;
    }
  }

  // broadcast from the group's last rank.
  std::vector<float> message(count, static_cast<float>(world_rank));
  group.broadcast(tensor_over(message, DType::kF32), n - 1)->wait();
  for (float value : message) EXPECT_EQ(value, static_cast<float>(members.back()));
  group.barrier()->wait();
}

TEST(Split, NodeLocalGroupsRunEveryCollectiveApart) {
  MemoryStore store;
  const Topology topology = Topology::blocks(kWorld, 2);
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    const int node = topology.node_of(rank);
    auto node_group = world->split(node, topology.local_rank_of(rank));
    ASSERT_NE(node_group, nullptr);
    check_collectives(*node_group, topology.ranks_on(node), rank);
    // The parent still works, and its counters are its own.
    const std::uint64_t parent_gathers =
        world->counters().ops[static_cast<std::size_t>(CollectiveKind::kAllGather)];
    EXPECT_EQ(parent_gathers, 1u);  // the split's exchange of colors
  });
}

TEST(Split, CrossNodeGroupsRunEveryCollectiveApart) {
  MemoryStore store;
  const Topology topology = Topology::blocks(kWorld, 2);
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    const int local = topology.local_rank_of(rank);
    auto across = world->split(local, topology.node_of(rank));
    ASSERT_NE(across, nullptr);
    std::vector<int> members;
    for (int node = 0; node < topology.node_count(); ++node) {
      members.push_back(topology.ranks_on(node)[static_cast<std::size_t>(local)]);
    }
    check_collectives(*across, members, rank);
  });
}

TEST(Split, RanksAreOrderedByKeyThenParentRankAndNoColorLeavesARankOut) {
  MemoryStore store;
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    // Rank 3 joins nothing; ranks 0 and 1 share key 5, rank 2 has key 0: order 2, 0, 1.
    const int color = rank == 3 ? kNoColor : 7;
    auto group = world->split(color, rank == 2 ? 0 : 5);
    if (rank == 3) {
      EXPECT_EQ(group, nullptr);
      return;
    }
    ASSERT_NE(group, nullptr);
    check_collectives(*group, {2, 0, 1}, rank);
  });
}

TEST(Split, GivenRequestsSplitWithoutExchangeAndGroupsSplitAgain) {
  MemoryStore store;
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    // Every rank derives every request alike: halves of the world.
    const std::vector<SplitRequest> halves{{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    auto half = world->split(halves);
    ASSERT_NE(half, nullptr);
    EXPECT_EQ(world->counters().ops[static_cast<std::size_t>(CollectiveKind::kAllGather)], 0u);
    check_collectives(*half, rank < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3}, rank);
    // A group of one, split from a group: the single-rank communicator.
    auto alone = half->split(half->rank(), 0);
    ASSERT_NE(alone, nullptr);
    check_collectives(*alone, {rank}, rank);
    // A second split of the same parent gets groups of its own (fresh store keys).
    auto world_again = world->split(0, kWorld - rank);
    ASSERT_NE(world_again, nullptr);
    check_collectives(*world_again, {3, 2, 1, 0}, rank);
  });
}

TEST(Split, RecordingCommunicatorRecordsItsGroupsOps) {
  MemoryStore store;
  run_ranks(kWorld, [&](int rank) {
    auto world = create_cpu_communicator(store, rank, kWorld, test_options(test_group()));
    RecordingCommunicator recorder(*world, [] { return std::string("test"); });
    auto group = recorder.split(rank % 2, rank);
    ASSERT_NE(group, nullptr);
    EXPECT_TRUE(recorder.ops().empty());  // the exchange ran on the inner communicator
    check_collectives(*group, rank % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3},
                      rank);
    EXPECT_EQ(dynamic_cast<RecordingCommunicator&>(*group).ops().size(), 5u);
  });
}

}  // namespace
}  // namespace zt::comm
