// Two "machines" in network namespaces joined by a veth pair, one `zerotrain launch
// --nnodes 2` in each (ctest label netns; needs root): the scenarios of the loopback
// suite, now with the nodes at different addresses that only their own network reaches.
#include <gtest/gtest.h>

#include "tests/integration/netns/netns_pair.h"

namespace zt::launch::testing {
namespace {

// Any port works: nothing else listens inside fresh namespaces.
constexpr int kPort = 29500;

class MultiNodeNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pair_.error().empty()) << "cannot create network namespaces: " << pair_.error();
  }
  NetnsPair pair_{'n'};
};

TEST_F(MultiNodeNetns, TwoNodesTrainToTheLossesOfOneNodeWithTwoRanks) {
  expect_same_losses_as_one_node(pair_.node(0), pair_.node(1), kPort);
}

TEST_F(MultiNodeNetns, NodeThatNeverComesIsNamedWithinTheRendezvousTimeout) {
  expect_missing_node_reported(pair_.node(0), kPort);
}

TEST_F(MultiNodeNetns, RankOfANodeWhoseNodeZeroNeverComesSaysTheConnectionIsRefused) {
  expect_absent_store_reported(pair_.node(1), pair_.node(0).address, kPort);
}

TEST_F(MultiNodeNetns, StoreListensOnlyOnTheMasterAddress) {
  // Node 0's own loopback: a store on every interface would answer there.
  expect_store_listens_only_on(pair_.node(0), "127.0.0.1", kPort);
}

TEST_F(MultiNodeNetns, WrongTokenAndGarbageFromAnotherNodeAreRefusedAndLoggedWhileTheJobTrains) {
  expect_strangers_refused(pair_.node(0), pair_.node(1), pair_.node(1), kPort);
}

}  // namespace
}  // namespace zt::launch::testing
