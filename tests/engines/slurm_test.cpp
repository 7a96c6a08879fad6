// A real one-host Slurm cluster (munged, slurmctld, slurmd started by the test in a temp
// dir) running `srun -n 2 zerotrain train`: rank 0 serves the store on the defaults
// Slurm allows, and the run trains to the same losses as under the launcher.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/program_run.h"
#include "support/temp_dir.h"
#include "support/test_paths.h"
#include "support/tiny_runs.h"

namespace zt::testing {
namespace {

const std::string kClusterScript = zt::testing::source_dir() + "/tests/support/slurm_cluster.sh";

// The cluster's daemons, from construction until destruction. A cluster that does not
// come up is a failure with the script's reason, not a skip: the test exists to run.
class SlurmCluster {
 public:
  explicit SlurmCluster(const std::filesystem::path& dir) : dir_(dir / "slurm") {
    // munged runs as its own user and must reach its socket through the test's dir.
    std::filesystem::permissions(
        dir, std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
        std::filesystem::perm_options::add);
    std::filesystem::create_directories(dir_);
    const ProgramResult start =
        run_program({kClusterScript, "start", dir_.string(), std::to_string(free_tcp_port()),
                     std::to_string(free_tcp_port())},
                    dir, "slurm-start", {}, std::chrono::seconds(90));
    started_ = start.exit_code == 0;
    if (!started_) reason_ = start.output();
  }
  ~SlurmCluster() {
    const ProgramResult stop =
        run_program({kClusterScript, "stop", dir_.string()}, dir_.parent_path(), "slurm-stop", {},
                    std::chrono::seconds(60));
    EXPECT_EQ(stop.exit_code, 0) << stop.output();
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  bool started() const { return started_; }
  const std::string& reason() const { return reason_; }
  EnvChanges env() const { return {{"SLURM_CONF", (dir_ / "slurm.conf").string()}}; }

 private:
  std::filesystem::path dir_;
  bool started_ = false;
  std::string reason_;
};

TEST(Slurm, SrunTwoTasksTrainToTheLossesOfLaunch) {
  TempDir dir;
  SlurmCluster cluster(dir.path());
  ASSERT_TRUE(cluster.started()) << "the one-host Slurm cluster did not start:\n"
                                 << cluster.reason();
  std::vector<std::string> command = {"srun", "-n", "2"};
  for (std::string& arg : tiny_train_command(dir / "run")) command.push_back(std::move(arg));
  const ProgramResult srun = run_program(command, dir.path(), "srun", cluster.env());
  ASSERT_EQ(srun.exit_code, 0) << srun.output();
  EXPECT_NE(srun.err.find("ranks started by Slurm, not by zerotrain launch: rank 0 serves the "
                          "store at 127.0.0.1:"),
            std::string::npos)
      << srun.output();
  EXPECT_NE(srun.err.find("derived from SLURM_JOB_ID"), std::string::npos) << srun.output();
  EXPECT_NE(srun.out.find("2 ranks"), std::string::npos) << srun.output();
  EXPECT_EQ(step_numbers(dir / "run/metrics.jsonl"), losses_under_launch(dir.path()));
}

TEST(Slurm, RankZeroKilledMidRunEndsTheStepPromptly) {
  // srun waits for every task, so its exit means rank 1 also left: by itself, promptly,
  // once rank 0 (and the store it served) was gone.
  TempDir dir;
  SlurmCluster cluster(dir.path());
  ASSERT_TRUE(cluster.started()) << "the one-host Slurm cluster did not start:\n"
                                 << cluster.reason();
  std::vector<std::string> command = {"srun", "-n", "2"};
  for (std::string& arg : tiny_train_command(dir / "run")) command.push_back(std::move(arg));
  command.insert(command.end(), {"--set", "train.steps=100000"});
  EnvChanges env = cluster.env();
  env.push_back({"ZEROTRAIN_FAULT", "rank=0,step=3,signal=9"});
  const ProgramResult srun = run_program(command, dir.path(), "srun", env);
  EXPECT_NE(srun.exit_code, 0) << srun.output();
  EXPECT_LT(srun.seconds, 20.0) << srun.output();
}

TEST(Slurm, TrainingInTheBatchScriptItselfIsRefusedSayingToUseSrun) {
  TempDir dir;
  SlurmCluster cluster(dir.path());
  ASSERT_TRUE(cluster.started()) << "the one-host Slurm cluster did not start:\n"
                                 << cluster.reason();
  std::string train;
  for (const std::string& arg : tiny_train_command(dir / "run")) train += "'" + arg + "' ";
  const std::filesystem::path script = dir / "job.sh";
  std::ofstream(script) << "#!/bin/sh\n" << train << "\necho \"train exited $?\"\n";
  const std::string log = (dir / "job.out").string();
  // sbatch --wait polls every few seconds; squeue every 0.1 s ends the wait sooner (<= 60 s).
  const std::string submit_and_wait =
      "id=$(sbatch --parsable -n 2 -o " + log + " " + script.string() +
      ") || exit 1; for i in $(seq 600); do [ -z \"$(squeue -h -j $id)\" ] && exit 0; "
      "sleep 0.1; done; echo \"job $id still queued after 60 s\" >&2; exit 1";
  const ProgramResult sbatch =
      run_program({"/bin/sh", "-c", submit_and_wait}, dir.path(), "sbatch", cluster.env());
  ASSERT_EQ(sbatch.exit_code, 0) << sbatch.output();
  const std::string job_output = read_text(log);
  EXPECT_NE(job_output.find("this is Slurm's batch script"), std::string::npos) << job_output;
  EXPECT_NE(job_output.find("srun zerotrain train"), std::string::npos) << job_output;
  EXPECT_NE(job_output.find("train exited 2"), std::string::npos) << job_output;
}

}  // namespace
}  // namespace zt::testing
