// A rank that stops (SIGSTOP, a debugger, a frozen machine) mid-run: the launcher says
// which rank is stopped, the ranks waiting on it say every few seconds which collective
// they wait in, then the job ends at the comm timeout naming the op, instead of hanging
// silently for the whole timeout.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

TEST(StoppedRank, OthersSayWhichCollectiveTheyWaitInUntilTheTimeoutEndsTheJob) {
  TempDir dir;
  constexpr int kTimeoutS = 7;  // the ranks say what they wait for every 5 s
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.grace_period = std::chrono::milliseconds(1000);
  options.status_interval = std::chrono::milliseconds(1000);
  options.rank_command = {zerotrain_exe(),
                          "train",
                          tiny_config(),
                          "--set",
                          "run.dir=" + (dir / "run"),
                          "--set",
                          "train.steps=1000",
                          "--set",
                          "runtime.comm_timeout_s=" + std::to_string(kTimeoutS)};
  const LaunchResult result =
      launch(options, dir, {{"ZEROTRAIN_FAULT", "rank=1,step=3,signal=19"}});  // SIGSTOP
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("[rank 0] zerotrain: 5 s of 7 s waiting for "), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find(" on rank 0 of 2; a peer may be stopped or slow"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("zerotrain launch: rank 0 (pid "), std::string::npos) << result.err;
  // The launcher sees which rank is stopped, and says how to resume it.
  const std::size_t stopped = result.err.find("zerotrain launch: rank 1 (pid ");
  ASSERT_NE(stopped, std::string::npos) << result.err;
  EXPECT_NE(result.err.find(") is stopped (SIGSTOP, Ctrl-Z or a debugger); its peers wait for it "
                            "until runtime.comm_timeout_s. `kill -CONT ",
                            stopped),
            std::string::npos)
      << result.err;
  // The timeout, the grace period, and start-up (slow under sanitizers and load).
  EXPECT_LT(seconds(result.elapsed), kTimeoutS + 1.0 + 15.0) << result.err;
}

}  // namespace
}  // namespace zt::launch::testing
