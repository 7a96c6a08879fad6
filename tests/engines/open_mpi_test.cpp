// Open MPI's real mpirun starting `zerotrain train` (no `zerotrain launch`): rank 0 serves
// the store, and the run trains to the same losses as under the launcher.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/tiny_runs.h"

namespace zt::testing {
namespace {

// Open MPI advertises the host's external address on its control channel; keep it on
// loopback so that the test needs no network.
const EnvChanges kOpenMpiOnLoopback{{"OMPI_MCA_oob_tcp_if_include", "lo"},
                                    {"OMPI_MCA_btl_tcp_if_include", "lo"}};

std::vector<std::string> mpirun_two_ranks(const std::filesystem::path& run_dir) {
  std::vector<std::string> command = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                      "2"};
  for (std::string& arg : tiny_train_command(run_dir)) command.push_back(std::move(arg));
  return command;
}

std::string host_name() {
  char host[256] = {};
  EXPECT_EQ(::gethostname(host, sizeof host - 1), 0);
  return host;
}

TEST(OpenMpi, MpirunTwoRanksTrainToTheLossesOfLaunch) {
  TempDir dir;
  const ProgramResult mpirun =
      run_program(mpirun_two_ranks(dir / "run"), dir.path(), "mpirun", kOpenMpiOnLoopback);
  ASSERT_EQ(mpirun.exit_code, 0) << mpirun.output();
  EXPECT_NE(mpirun.err.find("ranks started by Open MPI, not by zerotrain launch: rank 0 serves "
                            "the store at 127.0.0.1:"),
            std::string::npos)
      << mpirun.output();
  EXPECT_NE(mpirun.out.find("2 ranks"), std::string::npos) << mpirun.output();
  EXPECT_EQ(step_numbers(dir / "run/metrics.jsonl"), losses_under_launch(dir.path()));
}

TEST(OpenMpi, AStoreOnAHostNameTrainsWithAnExportedToken) {
  TempDir dir;
  EnvChanges env = kOpenMpiOnLoopback;
  env.push_back({"MASTER_ADDR", host_name()});
  env.push_back({"MASTER_PORT", std::to_string(free_tcp_port())});
  env.push_back({"ZEROTRAIN_STORE_TOKEN", "engine-test-token"});
  const ProgramResult mpirun =
      run_program(mpirun_two_ranks(dir / "run"), dir.path(), "mpirun", env);
  ASSERT_EQ(mpirun.exit_code, 0) << mpirun.output();
  EXPECT_NE(mpirun.err.find("listening on 0.0.0.0"), std::string::npos) << mpirun.output();
  EXPECT_EQ(step_numbers(dir / "run/metrics.jsonl"), losses_under_launch(dir.path()));
}

TEST(OpenMpi, AStoreOtherHostsCanReachWithoutTokenStopsAtOnceNamingTheVariable) {
  TempDir dir;
  EnvChanges env = kOpenMpiOnLoopback;
  env.push_back({"MASTER_ADDR", host_name()});
  env.push_back({"ZEROTRAIN_STORE_TOKEN", std::nullopt});
  const ProgramResult mpirun = run_program(mpirun_two_ranks(dir / "run"), dir.path(), "mpirun", env,
                                           std::chrono::seconds(60));
  EXPECT_NE(mpirun.exit_code, 0);
  EXPECT_LT(mpirun.seconds, 20.0);
  EXPECT_NE(mpirun.err.find("ZEROTRAIN_STORE_TOKEN is not set"), std::string::npos)
      << mpirun.output();
  EXPECT_FALSE(std::filesystem::exists(dir / "run/metrics.jsonl"));
}

TEST(OpenMpi, RankZeroKilledMidRunEndsTheJobPromptly) {
  // Rank 0 serves the store and is gone with it: rank 1 must not wait out its timeouts.
  TempDir dir;
  EnvChanges env = kOpenMpiOnLoopback;
  env.push_back({"ZEROTRAIN_FAULT", "rank=0,step=3,signal=9"});
  std::vector<std::string> command = mpirun_two_ranks(dir / "run");
  command.insert(command.end(), {"--set", "train.steps=100000"});
  const ProgramResult mpirun = run_program(command, dir.path(), "mpirun", env);
  EXPECT_NE(mpirun.exit_code, 0) << mpirun.output();
  EXPECT_LT(mpirun.seconds, 20.0) << mpirun.output();
}

}  // namespace
}  // namespace zt::testing
