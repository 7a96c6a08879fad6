// Two nodes on one machine over loopback: one `zerotrain launch --nnodes 2` per node with
// --master-addr 127.0.0.1, as a user tries a multi-node job before using several machines.
#include <gtest/gtest.h>

#include "tests/integration/multinode_harness.h"

namespace zt::launch::testing {
namespace {

const Node kLocal{{}, "127.0.0.1"};

TEST(MultiNodeLoopback, TwoLaunchersTrainToTheLossesOfOneNodeWithTwoRanks) {
  expect_same_losses_as_one_node(kLocal, kLocal, free_loopback_port());
}

TEST(MultiNodeLoopback, NodeThatNeverComesIsNamedWithinTheRendezvousTimeout) {
  expect_missing_node_reported(kLocal, free_loopback_port());
}

TEST(MultiNodeLoopback, RankOfANodeWhoseNodeZeroNeverComesSaysTheConnectionIsRefused) {
  expect_absent_store_reported(kLocal, "127.0.0.1", free_loopback_port());
}

TEST(MultiNodeLoopback, StoreListensOnlyOnTheMasterAddress) {
  // 127.0.0.2 is this machine too (all of 127/8 is loopback): a store on every interface
  // would answer there.
  expect_store_listens_only_on(kLocal, "127.0.0.2", free_loopback_port());
}

TEST(MultiNodeLoopback, WrongTokenAndGarbageAreRefusedAndLoggedWhileTheJobTrains) {
  expect_strangers_refused(kLocal, kLocal, kLocal, free_loopback_port());
}

}  // namespace
}  // namespace zt::launch::testing
