// The netns tests' two ways to run one job: over scripts/two-node-testbed (two namespaces
// joined by a rate-limited link, `ranks_per_node` ranks in each) and as `zerotrain launch`
// of the same ranks on one node, each with `settings` (--set pairs) after configs/tiny.toml.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {

// The testbed's run directory is `dir`/testbed/run.
inline CommandResult run_on_two_node_testbed(const TempDir& dir, const std::string& rate,
                                             int ranks_per_node,
                                             const std::vector<std::string>& settings) {
  std::vector<std::string> argv = {zt::testing::source_dir() + "/scripts/two-node-testbed",
                                   "--rate",
                                   rate,
                                   "--ranks-per-node",
                                   std::to_string(ranks_per_node),
                                   "--out",
                                   (dir.path() / "testbed").string(),
                                   tiny_config()};
  argv.insert(argv.end(), settings.begin(), settings.end());
  return run_command(argv, dir, {{"ZEROTRAIN", zerotrain_exe()}}, std::chrono::seconds(240));
}

// The run directory is `dir`/one.
inline CommandResult run_on_one_node(const TempDir& dir, int ranks,
                                     const std::vector<std::string>& settings) {
  std::vector<std::string> argv = {zerotrain_exe(),
                                   "launch",
                                   "--nproc-per-node",
                                   std::to_string(ranks),
                                   tiny_config(),
                                   "--set",
                                   "run.dir=" + (dir.path() / "one").string()};
  argv.insert(argv.end(), settings.begin(), settings.end());
  return run_command(argv, dir, {}, std::chrono::seconds(240));
}

}  // namespace zt::launch::testing
