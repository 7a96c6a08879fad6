// metrics.jsonl's bytes by node on real nodes (ctest label netns; needs root): over
// scripts/two-node-testbed with one rank per node, rank 0's ring neighbour is on the other
// node, so every byte it sends crosses the link; the same job on one node sends none across
// (Note [Counting bytes by node]).
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "tests/integration/netns/two_node_testbed.h"

namespace zt::launch::testing {
namespace {

struct StepBytes {
  std::uint64_t collectives = 0;  // all-reduce + reduce-scatter + all-gather
  std::uint64_t intra_node = 0;
  std::uint64_t cross_node = 0;
};

std::vector<StepBytes> step_bytes(const std::string& metrics_path) {
  std::vector<StepBytes> steps;
  std::istringstream lines(read_file(metrics_path));
  const auto field = [](const std::string& line, const char* key) {
    return std::stoull(zt::testing::json_field(line, key));
  };
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    steps.push_back({field(line, "all_reduce_bytes") + field(line, "reduce_scatter_bytes") +
                         field(line, "all_gather_bytes") + field(line, "all_to_all_bytes"),
                     field(line, "intra_node_bytes"), field(line, "cross_node_bytes")});
  }
  return steps;
}

TEST(TwoNodeTestbed, RankZeroSendsAcrossNodesOnlyWhenItsNeighbourIsOnTheOtherNode) {
  TempDir dir;
  const std::vector<std::string> settings = {
      "--set", "train.steps=3", "--set", "zero.stage=3", "--set", "runtime.comm_timeout_s=60"};
  const CommandResult nodes = run_on_two_node_testbed(dir, "100mbit", 1, settings);
  ASSERT_EQ(nodes.exit_code, 0) << nodes.out << nodes.err;
  const std::vector<StepBytes> across =
      step_bytes((dir.path() / "testbed" / "run" / "metrics.jsonl").string());
  ASSERT_EQ(across.size(), 3u);
  for (const StepBytes& step : across) {
    EXPECT_GT(step.cross_node, 0u);
    EXPECT_EQ(step.cross_node, step.collectives);
    EXPECT_EQ(step.intra_node, 0u);
  }

  const CommandResult single = run_on_one_node(dir, 2, settings);
  ASSERT_EQ(single.exit_code, 0) << single.out << single.err;
  const std::vector<StepBytes> inside = step_bytes((dir.path() / "one" / "metrics.jsonl").string());
  ASSERT_EQ(inside.size(), 3u);
  // (Which step a parameter lane's prefetch lands in depends on timing, so the two runs'
  // steps need not send the same bytes; each step's split must hold.)
  for (const StepBytes& step : inside) {
    EXPECT_GT(step.collectives, 0u);
    EXPECT_EQ(step.cross_node, 0u);
    EXPECT_EQ(step.intra_node, step.collectives);
  }
}

}  // namespace
}  // namespace zt::launch::testing
