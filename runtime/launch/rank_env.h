// Which rank this process is: read from the variables of torchrun (and `zerotrain
// launch`), Open MPI's mpirun or Slurm's srun, validated into one RankEnv.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace zt::launch {

struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;      // 0 only when world_size == 1
  std::string store_token;  // ZEROTRAIN_STORE_TOKEN; empty when not set
  std::string source;       // whose variables these were: "torchrun", "Open MPI", "Slurm"
};

// Looks up one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Precedence: torchrun's RANK/LOCAL_RANK/WORLD_SIZE/LOCAL_WORLD_SIZE (when RANK or
// WORLD_SIZE is set), then Open MPI's OMPI_COMM_WORLD_* (when OMPI_COMM_WORLD_RANK is),
// then Slurm's SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS and SLURM_NTASKS_PER_NODE or the
// first count of SLURM_TASKS_PER_NODE (when SLURM_PROCID is); see Note [Open MPI before
// Slurm]. MASTER_ADDR and MASTER_PORT always come from the environment and are required
// when world_size > 1. Returns nullopt when none of these is set: a single-rank run.
// Throws UsageError naming the variable and its value for anything missing, not a
// number, or inconsistent (RANK >= WORLD_SIZE, ...).
std::optional<RankEnv> read_rank_env(const EnvLookup& lookup);

// read_rank_env over the process environment.
std::optional<RankEnv> read_rank_env();

}  // namespace zt::launch
