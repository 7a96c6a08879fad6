// `zerotrain launch [options] -- PROGRAM [ARGS...]`: every rank runs the user's program with
// the rank variables `zerotrain train` gets; a program that cannot start is named, and a
// `--` with no program, or a CONFIG next to one, is a usage error before any rank starts.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

TEST(LaunchProgram, EveryRankRunsTheProgramWithItsRankAndWorldSize) {
  TempDir dir;
  // `sh` is looked up in PATH; the words after it reach it untouched (--set, --help too).
  const CommandResult result = run_command(
      {zerotrain_exe(), "launch", "--nproc-per-node", "2", "--", "sh", "-c",
       "echo \"rank=$RANK world=$WORLD_SIZE local=$LOCAL_RANK args=$0,$1\"", "--set", "--help"},
      dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 0] rank=0 world=2 local=0 args=--set,--help\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("[rank 1] rank=1 world=2 local=1 args=--set,--help\n"),
            std::string::npos)
      << result.out;
}

TEST(LaunchProgram, TheProgramGetsTheStoreToReachTheOtherRanks) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node=2", "--", "sh", "-c",
                   "test -n \"$MASTER_PORT\" && test -n \"$ZEROTRAIN_STORE_TOKEN\" && "
                   "echo \"store at $MASTER_ADDR\""},
                  dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 1] store at 127.0.0.1\n"), std::string::npos) << result.out;
}

TEST(LaunchProgram, MissingProgramIsNamedAndExits1LikeARankThatCannotStart) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node", "2", "--",
                   "/nonexistent/zt-no-such-program", "--set", "a.b=1"},
                  dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("zerotrain: error: cannot start `/nonexistent/zt-no-such-program`: "
                            "No such file or directory"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("[rank "), std::string::npos) << result.err;
}

TEST(LaunchProgram, DashDashWithoutAProgramIsAUsageError) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "launch", "--nproc-per-node", "2", "--"}, dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("zerotrain: error: `--` must be followed by the program each rank "
                            "runs: -- PROGRAM [ARGS...]"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(LaunchProgram, AConfigBesideAProgramIsAUsageError) {
  TempDir dir;
  const CommandResult result = run_command(
      {zerotrain_exe(), "launch", "--nproc-per-node", "2", tiny_config(), "--", "true"}, dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("unexpected argument '" + tiny_config() + "' before `--`"),
            std::string::npos)
      << result.err;
}

TEST(LaunchProgram, TheProgramFormStillNeedsNprocPerNode) {
  TempDir dir;
  const CommandResult result = run_command({zerotrain_exe(), "launch", "--", "true"}, dir);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("launch needs --nproc-per-node N"), std::string::npos) << result.err;
}

TEST(LaunchProgram, UsageDescribesTheProgramFormAndItsRendezvousTimeout) {
  TempDir dir;
  const CommandResult result = run_command({zerotrain_exe(), "launch", "--help"}, dir);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("zerotrain launch --nproc-per-node N [options] -- PROGRAM [ARGS...]"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("default 300 s"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace zt::launch::testing
