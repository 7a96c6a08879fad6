// `zerotrain train` started without the launcher by torchrun's variable names, as a job
// operator (Kubernetes) or a user sets them: rank 0 serves the store and the ranks train
// to the launcher's losses. torchrun itself is refused at once, saying what to use.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/tiny_runs.h"

namespace zt::testing {
namespace {

// sh quoting for one word.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Both ranks started by one shell, each with RANK/WORLD_SIZE/... of its own; the shell
// exits with the first failing rank's status.
std::vector<std::string> two_ranks_by_hand(const std::filesystem::path& run_dir, int port) {
  std::string train;
  for (const std::string& arg : tiny_train_command(run_dir)) train += quoted(arg) + " ";
  std::string script;
  for (int rank = 0; rank < 2; ++rank) {
    script += "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
              " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
              std::to_string(port) + " " + train + "& pid" + std::to_string(rank) + "=$!\n";
  }
  script += "wait $pid0; s0=$?; wait $pid1; s1=$?; [ $s0 -ne 0 ] && exit $s0; exit $s1\n";
  return {"/bin/sh", "-c", script};
}

const EnvChanges kNoLauncher{{"ZEROTRAIN_LAUNCHER_HOSTS_STORE", std::nullopt},
                             {"ZEROTRAIN_STORE_TOKEN", std::nullopt}};

TEST(TrainWithoutLauncher, RanksStartedByHandMeetOnRankZerosStoreAndTrainLikeLaunch) {
  TempDir dir;
  const ProgramResult ranks = run_program(two_ranks_by_hand(dir / "run", free_tcp_port()),
                                          dir.path(), "ranks", kNoLauncher);
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output();
  EXPECT_NE(ranks.err.find("ranks started with RANK and WORLD_SIZE set, not by zerotrain launch: "
                           "rank 0 serves the store at 127.0.0.1:"),
            std::string::npos)
      << ranks.output();
  EXPECT_EQ(step_numbers(dir / "run/metrics.jsonl"), losses_under_launch(dir.path()));
}

TEST(TrainWithoutLauncher, TorchrunIsRefusedAtOnceNamingZerotrainLaunch) {
  TempDir dir;
  EnvChanges env = kNoLauncher;
  for (const auto& [name, value] : EnvChanges{{"RANK", "0"},
                                              {"LOCAL_RANK", "0"},
                                              {"WORLD_SIZE", "2"},
                                              {"LOCAL_WORLD_SIZE", "2"},
                                              {"MASTER_ADDR", "127.0.0.1"},
                                              {"MASTER_PORT", std::to_string(free_tcp_port())},
                                              {"TORCHELASTIC_RUN_ID", "none"}}) {
    env.emplace_back(name, value);
  }
  const ProgramResult train = run_program(tiny_train_command(dir / "run"), dir.path(), "train", env,
                                          std::chrono::seconds(30));
  EXPECT_EQ(train.exit_code, 2) << train.output();
  EXPECT_LT(train.seconds, 5.0);
  EXPECT_NE(train.err.find("started by torchrun (TORCHELASTIC_RUN_ID is set)"), std::string::npos)
      << train.output();
  EXPECT_NE(train.err.find("zerotrain launch --nnodes"), std::string::npos) << train.output();
}

}  // namespace
}  // namespace zt::testing
