// `zerotrain launch` and `zerotrain train` as users type them: --name=value options, --help,
// config errors refused before any rank starts (exit 2), and the launcher's exit status
// and error report when the ranks themselves fail on a usage or config error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(LaunchCli, EqualsFormOfEveryOptionIsAccepted) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node=2", "--nnodes=1", "--node-rank=0",
                   "--master-addr=127.0.0.1", "--master-port=0", "--status-interval=2",
                   tiny_config(), "--set=run.dir=" + (dir / "run"), "--set", "train.steps=3"},
                  dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 0] zerotrain: done: loss"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("2 ranks"), std::string::npos) << result.out;
}

TEST(LaunchCli, MissingNprocPerNodeSaysHowToAsk) {
  TempDir dir;
  const CommandResult result = run_command({zerotrain_exe(), "launch", tiny_config()}, dir);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("launch needs --nproc-per-node N (see `zerotrain launch --help`)"),
            std::string::npos)
      << result.err;
}

TEST(LaunchCli, LaunchHelpAndTrainHelpPrintUsageAndExit0) {
  TempDir dir;
  const CommandResult launch_help = run_command({zerotrain_exe(), "launch", "--help"}, dir);
  EXPECT_EQ(launch_help.exit_code, 0) << launch_help.err;
  EXPECT_EQ(launch_help.out.rfind("usage: zerotrain launch --nproc-per-node N", 0), 0u)
      << launch_help.out;
  EXPECT_NE(launch_help.out.find("--master-addr A"), std::string::npos);
  EXPECT_TRUE(launch_help.err.empty()) << launch_help.err;

  const CommandResult train_help = run_command({zerotrain_exe(), "train", "--help"}, dir);
  EXPECT_EQ(train_help.exit_code, 0) << train_help.err;
  EXPECT_EQ(train_help.out.rfind("usage: zerotrain train CONFIG", 0), 0u) << train_help.out;

  const CommandResult short_help = run_command({zerotrain_exe(), "train", "-h"}, dir);
  EXPECT_EQ(short_help.exit_code, 0) << short_help.err;
}

TEST(LaunchCli, ConfigErrorIsRefusedOnceBeforeAnyRankStarts) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node", "2", tiny_config(), "--set",
                   "optimizer.lr=-1", "--set", "run.dir=" + (dir / "run")},
                  dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(count_of(result.err, "zerotrain: error: "), 1u) << result.err;
  EXPECT_NE(result.err.find("optimizer.lr"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("[rank "), std::string::npos) << "a rank was started:\n" << result.err;
}

TEST(LaunchCli, BatchSizesThatDoNotFitTheWorldAreRefusedBeforeAnyRankStarts) {
  TempDir dir;
  // 8 = micro 8 x accumulation 1 x world 1, but the launch makes a world of 2.
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node", "2", tiny_config(), "--set",
                   "train.global_batch_size=8", "--set", "run.dir=" + (dir / "run")},
                  dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("global_batch_size"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("[rank "), std::string::npos) << "a rank was started:\n" << result.err;
}

TEST(LaunchExitStatus, RanksFailingWithStatus2MakeTheLauncherExit2) {
  TempDir dir;
  const LaunchResult result = launch(
      sh_ranks(2, "echo 'zerotrain: error: bad.toml:3:1: x.y: unknown key' >&2; exit 2"), dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("exited with status 2"), std::string::npos) << result.err;
}

TEST(LaunchExitStatus, RankFailingWithAnotherStatusStillMakesIt1) {
  TempDir dir;
  const LaunchResult result = launch(sh_ranks(1, "exit 5"), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
}

TEST(LaunchExitStatus, AnErrorEveryRankReportsIsPrintedOnce) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  const std::string error = "zerotrain: error: cfg.toml:2:5: model.n_head: expected an integer";
  // Both ranks print the same error; rank 1 fails only once rank 0 has printed it, so the
  // launcher has both copies in hand whatever the timing.
  const std::string script = "echo 'some context' >&2; echo '" + error +
                             "' >&2; if [ \"$RANK\" = 0 ]; then echo go > '" + ready +
                             "'; sleep 60; else read line < '" + ready + "'; exit 2; fi";
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(count_of(result.err, error), 1u) << result.err;
  EXPECT_NE(result.err.find("  all 2 ranks reported the same error:\n    " + error + "\n"),
            std::string::npos)
      << result.err;
  // The rest of a rank's stderr is relayed as it comes, as before.
  EXPECT_NE(result.err.find("[rank 1] some context\n"), std::string::npos) << result.err;
}

TEST(LaunchExitStatus, AnErrorDifferingOnlyInTheRanksDeviceIsPrintedOnce) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  const std::string script =
      "echo \"zerotrain: error: out of memory on cuda:$RANK\" >&2; if [ \"$RANK\" = 0 ]; then "
      "echo go > '" +
      ready + "'; sleep 60; else read line < '" + ready + "'; exit 1; fi";
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("  all 2 ranks reported the same error:\n    zerotrain: error: out of "
                            "memory on cuda:{0,1}\n"),
            std::string::npos)
      << result.err;
}

TEST(LaunchExitStatus, AMultiLineErrorIsKeptWholeAndMergedAcrossRanks) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  // An out-of-memory error's shape: a first line, then indented lines (a table).
  const std::string script =
      "printf 'zerotrain: error: out of memory on cpu:%s: allocating 3 MiB\\n  in use: "
      "parameters 12.1 MiB\\n    12.1 MiB  parameters\\n' \"$RANK\" >&2; if [ \"$RANK\" = 0 ]; "
      "then echo go > '" +
      ready + "'; sleep 60; else read line < '" + ready + "'; exit 1; fi";
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("  all 2 ranks reported the same error:\n"
                            "    zerotrain: error: out of memory on cpu:{0,1}: allocating 3 MiB\n"
                            "      in use: parameters 12.1 MiB\n"
                            "        12.1 MiB  parameters\n"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("[rank 0]   in use"), std::string::npos)
      << "a continuation line relayed apart from its error: " << result.err;
}

TEST(LaunchExitStatus, DifferentErrorsAreEachShownWithTheirRanks) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  const std::string script =
      "if [ \"$RANK\" = 0 ]; then what=alpha; else what=beta; fi; echo \"zerotrain: error: "
      "failure $what\" >&2; if [ \"$RANK\" = 0 ]; then echo go > '" +
      ready + "'; sleep 60; else read line < '" + ready + "'; exit 1; fi";
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("  rank 0 reported:\n    zerotrain: error: failure alpha\n"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("  rank 1 reported:\n    zerotrain: error: failure beta\n"),
            std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace zt::launch::testing
