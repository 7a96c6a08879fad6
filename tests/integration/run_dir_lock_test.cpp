// Two real runs into one run.dir: while the first trains, the second stops at once naming
// the first's pid, and the first's metrics stay whole.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <thread>

#include "launch_harness.h"
#include "support/test_paths.h"

namespace zt::launch::testing {
namespace {

LaunchOptions tiny_run(int nproc, const std::string& run_dir, const std::string& steps) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.grace_period = std::chrono::milliseconds(2000);
  options.rank_command = {zt::testing::zerotrain_binary(),
                          "train",
                          zt::testing::source_dir() + "/configs/tiny.toml",
                          "--set",
                          "run.dir=" + run_dir,
                          "--set",
                          "train.steps=" + steps,
                          "--set",
                          "runtime.comm_timeout_s=20"};
  return options;
}

// The parent pid of `pid`, from /proc (0 when unknown).
pid_t parent_of(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream rest(stat.substr(paren + 2));
  char state = 0;
  long parent = 0;
  rest >> state >> parent;
  return static_cast<pid_t>(parent);
}

TEST(RunDirLock, SecondRunWhileTheFirstTrainsStopsAtOnceNamingItsPid) {
  TempDir dir;
  const std::string run_dir = dir / "run";
  TempDir first_logs;
  LauncherProcess first(tiny_run(2, run_dir, "100000"), first_logs);
  // Wait (bounded) until the first run has claimed run.dir and written a step.
  const auto deadline = Clock::now() + 30s;
  while (read_file(run_dir + "/metrics.jsonl").empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_FALSE(read_file(run_dir + "/metrics.jsonl").empty()) << "the first run never started";
  const std::string owner = read_file(run_dir + "/.lock");  // "pid N on HOST"
  ASSERT_EQ(owner.rfind("pid ", 0), 0u) << owner;
  const pid_t owner_pid = static_cast<pid_t>(std::stol(owner.substr(4)));
  EXPECT_EQ(parent_of(owner_pid), first.pid()) << "the lock is not held by the first run's rank";

  const LaunchResult second = launch(tiny_run(1, run_dir, "5"), dir);
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_LT(second.elapsed, 10s);
  EXPECT_NE(second.err.find("is in use by another run (pid " + std::to_string(owner_pid)),
            std::string::npos)
      << second.err;

  ::kill(first.pid(), SIGTERM);  // the launcher forwards it to its ranks
  first.wait();
  // Every line the first run wrote is a whole JSON object of its own steps, in order.
  std::ifstream in(run_dir + "/metrics.jsonl");
  int step = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.back() != '}') continue;  // the step cut short by SIGTERM
    ++step;
    EXPECT_EQ(line.rfind("{\"step\": " + std::to_string(step) + ",", 0), 0u) << line;
  }
  EXPECT_GE(step, 1);
}

}  // namespace
}  // namespace zt::launch::testing
