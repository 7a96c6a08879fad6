// scripts/two-node-testbed as the benchmark runs it (ctest label netns; needs root): two
// namespaces joined by a link that tc's tbf limits, a `zerotrain launch` of 2 ranks in each,
// and the job trains to exactly the losses of 4 ranks on one node; the namespaces are gone
// afterwards.
#include "tests/integration/netns/two_node_testbed.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zt::launch::testing {
namespace {

TEST(TwoNodeTestbed, TrainsOverARateLimitedLinkToTheLossesOfOneNode) {
  TempDir dir;
  const std::vector<std::string> settings = {
      "--set", "train.steps=6", "--set", "zero.stage=3", "--set", "runtime.comm_timeout_s=60"};
  const CommandResult nodes = run_on_two_node_testbed(dir, "100mbit", 2, settings);
  ASSERT_EQ(nodes.exit_code, 0) << nodes.out << nodes.err;
  EXPECT_NE(nodes.out.find("2 nodes x 2 ranks"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("tbf"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("rate 100Mbit"), std::string::npos) << nodes.out;

  const CommandResult single = run_on_one_node(dir, 4, settings);
  ASSERT_EQ(single.exit_code, 0) << single.out << single.err;
  const std::vector<std::string> losses =
      losses_of((dir.path() / "testbed" / "run" / "metrics.jsonl").string());
  EXPECT_EQ(losses.size(), 6u);
  EXPECT_EQ(losses, losses_of((dir.path() / "one" / "metrics.jsonl").string()));

  const CommandResult namespaces = run_command({"ip", "netns", "list"}, dir);
  EXPECT_EQ(namespaces.out.find("zttb"), std::string::npos) << namespaces.out;
}

}  // namespace
}  // namespace zt::launch::testing
