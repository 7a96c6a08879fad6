// The launcher when ranks fail or it is signalled: the others are stopped quickly (SIGKILL
// after the grace period), the report names the rank and how it ended, nothing survives.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "runtime/launch/child_process.h"
#include "tests/integration/launch_harness.h"

namespace zt::launch::testing {
namespace {

// A rank that records its pid and that of a child it waits on, as a training rank with
// helper processes would (both must be gone after the launcher returns), then says so on
// the FIFO `ready` so that the failing rank fails only after that.
std::string sleeper(const TempDir& dir, const std::string& ready) {
  const std::string pids = dir / "pids";
  return "echo $$ >> '" + pids + "'; sleep 60 & echo $! >> '" + pids + "'; echo ready > '" + ready +
         "'; wait";
}

// Rank 1's script: waits for rank 0's line on `ready`, then runs `fail`.
std::string rank1_fails(const std::string& ready, const std::string& fail) {
  return "if [ \"$RANK\" = 1 ]; then read line < '" + ready + "'; " + fail + "; fi; ";
}

void expect_no_survivors(const TempDir& dir) {
  const std::vector<pid_t> pids = read_pids(dir / "pids");
  EXPECT_FALSE(pids.empty()) << "the ranks did not record their pids";
  const std::vector<pid_t> alive = survivors(pids);
  EXPECT_TRUE(alive.empty()) << alive.size() << " process(es) of the ranks outlived the launcher";
  for (pid_t pid : alive) ::kill(pid, SIGKILL);  // our own descendants, left by a bug
}

TEST(LaunchFailure, RankExitingWithStatus3StopsTheOthersWithin10Seconds) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  const std::string script =
      rank1_fails(ready, "echo 'loading shard' >&2; echo 'bad shard checksum' >&2; exit 3") +
      sleeper(dir, ready);
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_LT(seconds(result.elapsed), 10.0);
  EXPECT_NE(result.err.find("zerotrain launch: rank 1 (pid "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(") exited with status 3; stopped the other 1 rank."), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("  last lines of rank 1's stderr:\n    loading shard\n"
                            "    bad shard checksum\n"),
            std::string::npos)
      << result.err;
  expect_no_survivors(dir);
}

TEST(LaunchFailure, RankKilledBySigkillIsReportedWithTheSignal) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  const std::string script =
      rank1_fails(ready, "echo 'out of memory, probably' >&2; kill -9 $$") + sleeper(dir, ready);
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_LT(seconds(result.elapsed), 10.0);
  EXPECT_NE(result.err.find("rank 1 (pid "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("was killed by signal 9 (SIGKILL)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("    out of memory, probably\n"), std::string::npos) << result.err;
  expect_no_survivors(dir);
}

TEST(LaunchFailure, TailHoldsOnlyTheLastLinesOfStderr) {
  TempDir dir;
  LaunchOptions options = sh_ranks(1, "for i in 1 2 3 4 5; do echo line$i >&2; done; exit 7");
  options.stderr_tail_lines = 2;
  const LaunchResult result = launch(options, dir);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("exited with status 7; no other rank was still running."),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("stderr:\n    line4\n    line5\n"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("    line3\n"), std::string::npos) << result.err;
}

TEST(LaunchFailure, RankIgnoringSigtermIsKilledAfterTheGracePeriod) {
  TempDir dir;
  const std::string ready = make_fifo(dir / "ready");
  // Rank 1 fails only once rank 0 ignores SIGTERM, so only SIGKILL can stop rank 0.
  const std::string script = rank1_fails(ready, "exit 3") + "trap '' TERM; " + sleeper(dir, ready);
  LaunchOptions options = sh_ranks(2, script);
  options.grace_period = std::chrono::milliseconds(500);
  const LaunchResult result = launch(options, dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_GE(seconds(result.elapsed), 0.5) << "SIGKILL came before the grace period ended";
  EXPECT_LT(seconds(result.elapsed), 10.0);
  EXPECT_NE(result.err.find("rank 0 (pid "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("is still running 500 ms after SIGTERM; sending SIGKILL."),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("rank 1 (pid "), std::string::npos);
  EXPECT_NE(result.err.find("exited with status 3"), std::string::npos) << result.err;
  expect_no_survivors(dir);
}

// SIGTERM or SIGINT sent to the launcher (`count` times) once every rank is running.
LaunchResult signal_launcher(int signo, const TempDir& dir, Clock::duration* after_signal,
                             const std::string& prologue = "", int count = 1) {
  ReadyFifo ready_reader(dir / "ready");
  LaunchOptions options =
      sh_ranks(2, prologue + "echo $$ >> '" + dir / "pids" + "'; sleep 60 & echo $! >> '" +
                      dir / "pids" + "'; echo ready > '" + ready_reader.path() + "'; wait");
  options.grace_period = std::chrono::seconds(60);
  LauncherProcess launcher(options, dir);
  EXPECT_TRUE(ready_reader.wait_for_lines(2)) << "the ranks did not start";
  const auto sent = Clock::now();
  for (int i = 0; i < count; ++i) {
    // Two signals sent at once may be delivered as one: send the next once this one
    // has been seen.
    ::kill(launcher.pid(), signo);
    const std::string seen = "received " + signal_name(signo) + (i == 0 ? ";" : " again");
    EXPECT_TRUE(launcher.wait_for_stderr(seen)) << seen;
  }
  LaunchResult result = launcher.wait();
  *after_signal = Clock::now() - sent;
  return result;
}

TEST(LaunchSignals, SigtermToTheLauncherIsForwardedAndItExits143) {
  TempDir dir;
  Clock::duration after_signal{};
  const LaunchResult result = signal_launcher(SIGTERM, dir, &after_signal);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_LT(seconds(after_signal), 3.0) << "the grace period is 60 s: not forwarded?";
  EXPECT_NE(result.err.find("zerotrain launch: received SIGTERM; forwarding it to 2 ranks"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(read_pids(dir / "pids").size(), 4u);
  expect_no_survivors(dir);
}

TEST(LaunchSignals, SigintToTheLauncherExits130AndLeavesNoOrphan) {
  TempDir dir;
  Clock::duration after_signal{};
  // The shells' background sleeps ignore SIGINT (POSIX, for `&` without job control):
  // they go only because the launcher kills a rank's process group when the rank exits.
  const LaunchResult result = signal_launcher(SIGINT, dir, &after_signal);
  EXPECT_EQ(result.exit_code, 130) << result.err;
  EXPECT_LT(seconds(after_signal), 3.0);
  EXPECT_NE(result.err.find("received SIGINT"), std::string::npos) << result.err;
  expect_no_survivors(dir);
}

TEST(LaunchSignals, ASecondSignalSkipsTheGracePeriod) {
  TempDir dir;
  Clock::duration after_signal{};
  // The ranks ignore SIGTERM and the grace period is 60 s: only the second SIGTERM, which
  // means "kill them now", ends this within the bound.
  const LaunchResult result = signal_launcher(SIGTERM, dir, &after_signal, "trap '' TERM; ", 2);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_LT(seconds(after_signal), 5.0);
  EXPECT_NE(result.err.find("received SIGTERM again; killing the ranks."), std::string::npos)
      << result.err;
  expect_no_survivors(dir);
}

}  // namespace
}  // namespace zt::launch::testing
