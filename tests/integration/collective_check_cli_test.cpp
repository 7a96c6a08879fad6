// comm.check_collectives through real processes (Note [The collective check]): one rank of a
// `zerotrain launch` job is given another zero.reduce_bucket_size (a rank started with a
// config of its own), so its gradient buckets differ from its peers'. With "every", every rank
// stops at the first bucket, before its data moves, naming the group, the ranks and both
// sizes, well within the collective timeout (stages 0 and 3); without the check the run ends
// with every rank's flight record on disk and `zerotrain diagnose` names the odd rank's first
// differing op; with "step" (and "off"), the same job with equal configs trains exactly as
// without the check.
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

// Without the check the odd rank's first bucket meets the others' larger one: Gloo ends a
// rank on the longer message, the launcher stops the rest, every rank leaves its record, and
// `zerotrain diagnose` names the first op the odd rank issued differently, in step 1.
void expect_odd_bucket_diagnosed(int ranks, int odd_rank, int stage) {
  TempDir dir;
  const CommandResult result = launch_with_one_odd_bucket(ranks, odd_rank, stage, "off", dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_LT(seconds(result.elapsed), 30.0 + 15.0) << result.err;
  expect_flight_records(dir / "run", ranks, result.err);
  const CommandResult diagnosis =
      run_command({zerotrain_exe(), "diagnose", dir / "run"}, dir, {}, 60s);
  const std::string verdict = diagnosis.out + diagnosis.err;
  const std::size_t found = verdict.find("ranks issued different ops as #");
  ASSERT_NE(found, std::string::npos) << verdict << "\n" << result.err;
  const std::string line = verdict.substr(found, verdict.find('\n', found) - found);
  EXPECT_NE(line.find(", rank " + std::to_string(odd_rank) + " "), std::string::npos) << line;
  EXPECT_NE(line.find("; step 1, phase \""), std::string::npos) << line;
}

TEST(CollectiveCheckCli, WithoutTheCheckAnotherBucketSizeIsDiagnosedStage3TwoRanks) {
  expect_odd_bucket_diagnosed(2, 1, 3);
}

TEST(CollectiveCheckCli, WithoutTheCheckAnotherBucketSizeIsDiagnosedStage0FourRanks) {
  expect_odd_bucket_diagnosed(4, 2, 0);
}

TEST(CollectiveCheckCli, EveryStopsARankWithAnotherBucketSizeAtStage3) {
  TempDir dir;
  const CommandResult result = launch_with_one_odd_bucket(2, 1, 3, "every", dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_LT(seconds(result.elapsed), 25.0) << result.err;
  EXPECT_NE(result.err.find("Stopped before the op's data moved."), std::string::npos)
      << result.err;
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
