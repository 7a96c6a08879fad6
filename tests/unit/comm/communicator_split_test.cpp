// Splits of the communicators without peers: the single-rank one (a group of one) and the
// estimator's meta communicator, which splits by given requests only and counts the bytes
// its group's ring would send.
#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator_factory.h"
#include "comm/meta_communicator.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "core/tensor.h"

namespace zt::comm {
namespace {

TEST(Split, SingleRankSplitsIntoAGroupOfOneOrNothing) {
  MemoryStore store;
  auto world = create_cpu_communicator(store, 0, 1);
  auto group = world->split(3, 0);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->world_size(), 1);
  std::vector<float> values{1.0f, 2.0f};
  group->all_reduce(Tensor::wrap(values.data(), Shape{2}, DType::kF32), ReduceOp::kSum)->wait();
  EXPECT_EQ(values[1], 2.0f);
  EXPECT_EQ(world->split(kNoColor, 0), nullptr);
}

TEST(Split, MetaCommunicatorSplitsByGivenRequestsIntoItsGroupsSize) {
  MetaCommunicator world(5, 8, nullptr);
  // Two nodes of four: rank 5 is local rank 1 of node 1.
  std::vector<SplitRequest> by_node;
  for (int r = 0; r < 8; ++r) by_node.push_back({r / 4, r % 4});
  auto node = world.split(by_node);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->rank(), 1);
  EXPECT_EQ(node->world_size(), 4);
  // A ring all-gather of 4 KiB in a group of 4 sends 3/4 of it.
  std::vector<float> shard(256), gathered(1024);
  node->all_gather(Tensor::wrap(shard.data(), Shape{256}, DType::kF32),
                   Tensor::wrap(gathered.data(), Shape{1024}, DType::kF32))
      ->wait();
  EXPECT_EQ(node->counters().bytes(CollectiveKind::kAllGather), 3072u);
}

TEST(Split, MetaCommunicatorRefusesToGuessItsPeersColors) {
  MetaCommunicator world(0, 2, nullptr);
  EXPECT_THROW(world.split(0, 0), InternalError);
}

TEST(Split, RequestsForAnotherWorldSizeAreABug) {
  MetaCommunicator world(0, 2, nullptr);
  EXPECT_THROW(world.split(std::vector<SplitRequest>{{0, 0}}), InternalError);
}

}  // namespace
}  // namespace zt::comm
