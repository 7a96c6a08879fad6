// Which rank this process is and where its rendezvous store is: read from the variables of
// `zerotrain launch` (torchrun's names), Open MPI's mpirun or Slurm's srun, validated into
// one RankEnv.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace zt::launch {

// `zerotrain launch` sets this (to "1") for every rank it starts: it serves the store.
inline constexpr const char* kLauncherHostsStoreEnvVar = "ZEROTRAIN_LAUNCHER_HOSTS_STORE";

// Who serves the store the ranks rendezvous on.
enum class StoreHost {
  kLauncher,  // `zerotrain launch` (node 0's): every rank only connects
  kRankZero,  // nobody else: rank 0 serves it in-process, every rank (0 too) connects
};

struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  // The index of this rank's node, when the launcher says: GROUP_RANK (`zerotrain launch`,
  // torchrun; NODE_RANK when only it is set) or SLURM_NODEID. Open MPI exports none (its
  // OMPI_COMM_WORLD_NODE_RANK is a rank on the node); comm::Topology then numbers nodes by
  // host name.
  std::optional<int> node_rank;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0 only when world_size == 1
  // How master_addr and master_port were found, for messages: "set by MASTER_ADDR", "the
  // first host of SLURM_STEP_NODELIST", "derived from SLURM_JOB_ID and SLURM_STEP_ID", ...
  std::string master_addr_origin = "the default";
  std::string master_port_origin = "the default";
  StoreHost store_host = StoreHost::kRankZero;
  // Where rank 0 listens when it serves the store: master_addr when it is a numeric
  // address, every interface ("0.0.0.0") when it is a host name, whose resolution on
  // rank 0's host may differ from the one the other hosts see.
  std::string store_bind_address = "127.0.0.1";
  // Clients must present it. ZEROTRAIN_STORE_TOKEN when set; with a store on loopback
  // and no token set, an identity of the job (see Note [Store token without a launcher]).
  std::string store_token;
  // Whose variable names these were: "torchrun" (also `zerotrain launch`, a job operator
  // or a user setting RANK/WORLD_SIZE), "Open MPI", "Slurm".
  std::string source;
};

// Looks up one environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Precedence: torchrun's RANK/LOCAL_RANK/WORLD_SIZE/LOCAL_WORLD_SIZE (when RANK or
// WORLD_SIZE is set), then Open MPI's OMPI_COMM_WORLD_* (when OMPI_COMM_WORLD_RANK is),
// then Slurm's SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS and SLURM_NTASKS_PER_NODE or the
// first count of SLURM_TASKS_PER_NODE (when SLURM_PROCID is); see Note [Open MPI before
// Slurm]. The node index, where the launcher gives one: GROUP_RANK or NODE_RANK, SLURM_NODEID.
// Returns nullopt when none of these is set: a single-rank run.
//
// The store: with ZEROTRAIN_LAUNCHER_HOSTS_STORE the launcher serves it at MASTER_ADDR:
// MASTER_PORT. Otherwise rank 0 does, where MASTER_ADDR and MASTER_PORT say; under Slurm
// and Open MPI they have defaults (see Note [Where rank 0 serves the store]). Started by
// torchrun itself (TORCHELASTIC_* set), whose store speaks another protocol, it refuses.
//
// Throws UsageError naming the variable and its value for anything missing, not a
// number, or inconsistent (RANK >= WORLD_SIZE, ...), and saying what to do.
std::optional<RankEnv> read_rank_env(const EnvLookup& lookup);

// "n1:29400 (host: the first host of SLURM_STEP_NODELIST; port: derived from ...)", for
// messages about the store.
std::string describe_store_location(const RankEnv& env);

// Whether a host name or address is this host's loopback ("localhost", 127.x.y.z, "::1").
bool is_loopback_address(const std::string& address);

// read_rank_env over the process environment.
std::optional<RankEnv> read_rank_env();

}  // namespace zt::launch
