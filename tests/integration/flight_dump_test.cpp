// Flight records asked for from outside a rank (Note [Flight records on signals]), through the
// real `zerotrain launch`: SIGUSR1 to the launcher has every rank write its record while the
// run goes on and prints the verdict; SIGTERM to it stops the ranks, which write theirs as
// they go, and the verdict is printed again; a rank killed mid-step (stages 0 and 3, 2 and 4
// ranks) is named in the launcher's report by the records of the ranks it left behind;
// a rank that skips one collective is named with the op it left out (stages 3 and 0, 2 and 4
// ranks); comm.dump_on_exit writes the record of a run that ended well.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>

#include "data/json_document.h"
#include "tests/integration/command_harness.h"

namespace zt::launch::testing {
namespace {

using namespace std::chrono_literals;

std::size_t line_count(const std::string& path) {
  const std::string text = read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Polls until `path` has more than `lines` lines; false after the bound.
bool wait_for_lines_beyond(const std::string& path, std::size_t lines, Clock::duration bound) {
  const auto deadline = Clock::now() + bound;
  while (line_count(path) <= lines) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50ms);  // polling a file the ranks write, bounded
  }
  return true;
}

std::string reason_of(const std::string& path) {
  return data::parse_json(read_file(path), path).find("reason")->as_string("reason");
}

std::vector<std::string> launch_argv(int ranks, const TempDir& dir, std::vector<std::string> sets) {
  std::vector<std::string> argv = {zerotrain_exe(),           "launch",      "--nproc-per-node",
                                   std::to_string(ranks),     tiny_config(), "--set",
                                   "run.dir=" + (dir / "run")};
  for (std::string& set : sets) {
    argv.push_back("--set");
    argv.push_back(std::move(set));
  }
  return argv;
}

TEST(FlightDump, SigUsr1ToTheLauncherHasEveryRankWriteItsRecordAndTheRunGoesOn) {
  TempDir dir;
  CommandProcess launcher(
      launch_argv(2, dir, {"train.steps=100000", "run.log_every=1", "zero.stage=3"}), dir,
      "launch");
  const std::string metrics = dir / "run/metrics.jsonl";
  ASSERT_TRUE(wait_for_lines_beyond(metrics, 2, 60s)) << launcher.err_so_far();

  ::kill(launcher.pid(), SIGUSR1);
  ASSERT_TRUE(launcher.wait_for_stderr("zerotrain launch: the ranks' flight records:\n", 30s))
      << launcher.err_so_far();
  const std::string err = launcher.err_so_far();
  EXPECT_NE(err.find("received SIGUSR1; asking 2 ranks for their flight records"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("left no flight record"), std::string::npos) << err;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string path = dir / ("run/flight/rank-" + std::to_string(rank) + ".json");
    ASSERT_TRUE(std::filesystem::is_regular_file(path)) << err;
    EXPECT_EQ(reason_of(path).rfind("SIGUSR1", 0), 0u) << reason_of(path);
  }
  // The run goes on: more steps are logged after the dump.
  EXPECT_TRUE(wait_for_lines_beyond(metrics, line_count(metrics), 30s)) << launcher.err_so_far();

  // SIGTERM stops it; the ranks write their records as they go and the verdict is printed.
  ::kill(launcher.pid(), SIGTERM);
  const CommandResult result = launcher.wait(60s);
  EXPECT_EQ(result.exit_code, 143) << result.err;
  EXPECT_NE(result.err.find("zerotrain launch: the ranks' flight records at SIGTERM:\n    - rank "),
            std::string::npos)
      << result.err;
  EXPECT_EQ(reason_of(dir / "run/flight/rank-0.json").rfind("SIGTERM", 0), 0u)
      << reason_of(dir / "run/flight/rank-0.json");
}

// `ranks` ranks train at `stage` under ZEROTRAIN_FAULT=`fault` with a collective timeout of
// `timeout_s`: the job fails within the timeout + 15 s and the launcher prints the verdict.
CommandResult launch_with_fault(int ranks, int stage, int timeout_s, const std::string& fault,
                                const TempDir& dir) {
  const CommandResult result =
      run_command(launch_argv(ranks, dir,
                              {"train.steps=1000", "zero.stage=" + std::to_string(stage),
                               "runtime.comm_timeout_s=" + std::to_string(timeout_s)}),
                  dir, {{"ZEROTRAIN_FAULT", fault}}, 120s);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_LT(seconds(result.elapsed), timeout_s + 15.0) << result.err;
  EXPECT_NE(result.err.find("the ranks' flight records say:\n"), std::string::npos) << result.err;
  return result;
}

// Rank 1 dies by SIGKILL before step 3: its peers' collectives fail or they are stopped by the
// launcher, and either way write records; the launcher's report says what they show.
void expect_killed_rank_named(int ranks, int stage) {
  TempDir dir;
  const CommandResult result = launch_with_fault(ranks, stage, 10, "rank=1,step=3,signal=9", dir);
  EXPECT_NE(result.err.find("    - rank 1 left no flight record"), std::string::npos) << result.err;
  expect_flight_records(dir / "run", ranks, result.err, /*except=*/1);
  for (int rank = 0; rank < ranks; ++rank) {
    if (rank == 1) continue;
    // Each survivor's last op is of step 2 or 3, where rank 1 went.
    EXPECT_NE(result.err.find("    - rank " + std::to_string(rank) + " "), std::string::npos)
        << result.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "run/flight/rank-1.json"));
}

TEST(FlightDump, ARankKilledMidStepIsNamedByTheRecordsOfTheOthersStage3TwoRanks) {
  expect_killed_rank_named(2, 3);
}

TEST(FlightDump, ARankKilledMidStepIsNamedByTheRecordsOfTheOthersStage0FourRanks) {
  expect_killed_rank_named(4, 0);
}

// Rank 1 sleeps as step 3's backward begins: rank 0 times out waiting for it in a collective
// and leaves its record; the launcher stops rank 1 (and the others), which write theirs as
// SIGTERM ends them; the verdict names rank 1 as behind, in step 3, and the op rank 0 stopped in.
void expect_sleeper_named_behind(int ranks, int stage) {
  TempDir dir;
  const CommandResult result =
      launch_with_fault(ranks, stage, 5, "rank=1,step=3,sleep=60,at=backward", dir);
  EXPECT_NE(result.err.find("    - rank 1 is behind in group "), std::string::npos) << result.err;
  // Rank 0 waits in an op of step 3 (submitted in its forward's last gathers, the loss or the
  // backward, as the prefetch has it).
  const std::size_t stopped = result.err.find("    - rank 0 stopped in ");
  ASSERT_NE(stopped, std::string::npos) << result.err;
  const std::string line = result.err.substr(stopped, result.err.find('\n', stopped) - stopped);
  EXPECT_NE(line.find("; step 3, phase \""), std::string::npos) << line;
  EXPECT_EQ(reason_of(dir / "run/flight/rank-1.json").rfind("SIGTERM", 0), 0u);
  expect_flight_records(dir / "run", ranks, result.err);
}

TEST(FlightDump, ARankAsleepInBackwardIsNamedAsBehindInItsStep) {
  expect_sleeper_named_behind(2, 3);
}

TEST(FlightDump, ARankAsleepInBackwardIsNamedAsBehindInItsStepStage0FourRanks) {
  expect_sleeper_named_behind(4, 0);
}

// Rank 1 leaves out the first `kind` op of step 3 (ZEROTRAIN_FAULT skip=): its next op meets
// the one it skipped on the others, Gloo finds a message longer than the op and ends a rank
// (Note [A record from a terminating rank]), the launcher stops the rest, and the verdict
// names the op rank 1 did not issue, in step 3, with every rank's record on disk.
void expect_skipped_op_named(int ranks, int stage, const std::string& kind) {
  TempDir dir;
  const CommandResult result =
      launch_with_fault(ranks, stage, 10, "rank=1,step=3,skip=" + kind, dir);
  const std::size_t named = result.err.find("    - rank 1 did not issue " + kind + " #");
  ASSERT_NE(named, std::string::npos) << result.err;
  const std::string line = result.err.substr(named, result.err.find('\n', named) - named);
  EXPECT_NE(line.find("; step 3, phase \""), std::string::npos) << line;
  EXPECT_EQ(line.find("(or rank 0 issued one op more)") != std::string::npos, ranks == 2) << line;
  expect_flight_records(dir / "run", ranks, result.err);
}

TEST(FlightDump, ARankThatSkipsAnAllGatherIsNamedWithTheOpStage3TwoRanks) {
  expect_skipped_op_named(2, 3, "all_gather");
}

TEST(FlightDump, ARankThatSkipsAnAllReduceIsNamedWithTheOpStage0FourRanks) {
  expect_skipped_op_named(4, 0, "all_reduce");
}

TEST(FlightDump, DumpOnExitWritesTheRecordOfARunThatEndedWell) {
  TempDir dir;
  const CommandResult result =
      run_command({zerotrain_exe(), "train", tiny_config(), "--set", "run.dir=" + (dir / "run"),
                   "--set", "train.steps=2", "--set", "comm.dump_on_exit=true"},
                  dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string path = dir / "run/flight/rank-0.json";
  ASSERT_TRUE(std::filesystem::is_regular_file(path)) << result.err;
  const data::JsonValue record = data::parse_json(read_file(path), path);
  EXPECT_EQ(record.find("reason")->as_string("reason"), "exit: the run ended");
  EXPECT_EQ(record.find("world_size")->as_integer("world_size"), 1);
  EXPECT_FALSE(record.find("entries")->as_array("entries").empty());

  // Without it, a run that ended well leaves no record.
  TempDir plain;
  ASSERT_EQ(run_command({zerotrain_exe(), "train", tiny_config(), "--set",
                         "run.dir=" + (plain / "run"), "--set", "train.steps=2"},
                        plain)
                .exit_code,
            0);
  EXPECT_FALSE(std::filesystem::exists(plain / "run/flight"));
}

}  // namespace
}  // namespace zt::launch::testing
