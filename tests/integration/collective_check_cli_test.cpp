// comm.check_collectives through real processes (Note [The collective check]): one rank of a
// `zerotrain launch` job is given another zero.reduce_bucket_size (a rank started with a
// config of its own), so its gradient buckets differ from its peers'. With "every", every rank
// stops at the first bucket, before its data moves, naming the group, the ranks and both
// sizes, well within the collective timeout; with "step" (and "off"), the same job with equal
// configs trains exactly as without the check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

using namespace std::chrono_literals;

// `zerotrain launch -- sh -c SCRIPT`: rank `odd_rank` trains with reduce_bucket_size 16KiB,
// the others with the config's 64KiB.
CommandResult launch_with_one_odd_bucket(int ranks, int odd_rank, int stage,
                                         const std::string& check, const TempDir& dir) {
  const std::string common =
      "'" + zerotrain_exe() + "' train '" + tiny_config() + "' --set run.dir='" + (dir / "run") +
      "' --set train.steps=3 --set zero.stage=" + std::to_string(stage) +
      " --set runtime.comm_timeout_s=30 --set comm.check_collectives=" + check;
  const std::string script = "if [ \"$RANK\" = " + std::to_string(odd_rank) + " ]; then exec " +
                             common + " --set zero.reduce_bucket_size=16KiB; else exec " + common +
                             "; fi";
  return run_command({zerotrain_exe(), "launch", "--nproc-per-node", std::to_string(ranks), "--",
                      "sh", "-c", script},
                     dir, {}, 120s);
}

void expect_stopped_before_data_moved(const CommandResult& result, int odd_rank) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  // Far below the 30 s collective timeout: the check stops it, not a hang.
  EXPECT_LT(seconds(result.elapsed), 25.0) << result.err;
  EXPECT_NE(result.err.find("collective check (comm.check_collectives = \"every\"): the ranks of "
                            "group world/gradients issued different collectives"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("rank " + std::to_string(odd_rank) + " all_reduce #"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("Stopped before the op's data moved."), std::string::npos)
      << result.err;
}

TEST(CollectiveCheckCli, EveryStopsARankWithAnotherBucketSizeTwoRanks) {
  TempDir dir;
  expect_stopped_before_data_moved(launch_with_one_odd_bucket(2, 1, 0, "every", dir), 1);
}

TEST(CollectiveCheckCli, EveryStopsARankWithAnotherBucketSizeFourRanks) {
  TempDir dir;
  expect_stopped_before_data_moved(launch_with_one_odd_bucket(4, 2, 0, "every", dir), 2);
}

TEST(CollectiveCheckCli, ACheckedRunOfAgreeingRanksTrainsAsAnUncheckedOne) {
  std::vector<std::vector<std::string>> losses;
  for (const std::string check : {"off", "step", "every"}) {
    TempDir dir;
    const CommandResult result =
        run_command({zerotrain_exe(), "launch", "--nproc-per-node", "2", tiny_config(), "--set",
                     "run.dir=" + (dir / "run"), "--set", "train.steps=4", "--set", "zero.stage=3",
                     "--set", "comm.check_collectives=" + check},
                    dir, {}, 120s);
    ASSERT_EQ(result.exit_code, 0) << check << "\n" << result.err;
    losses.push_back(losses_of(dir / "run/metrics.jsonl"));
  }
  ASSERT_EQ(losses[0].size(), 4u);
  EXPECT_EQ(losses[1], losses[0]) << "step";
  EXPECT_EQ(losses[2], losses[0]) << "every";
}

}  // namespace
}  // namespace zt::launch::testing
