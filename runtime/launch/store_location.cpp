// locate_store: the launcher's store, or rank 0's at MASTER_ADDR:MASTER_PORT with the
// defaults Slurm and Open MPI allow, and the token policy for a store without a launcher.
#include <arpa/inet.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/store/store_token.h"
#include "core/error.h"
#include "runtime/launch/slurm_nodelist.h"
#include "runtime/launch/store_location_internal.h"

namespace zt::launch {
namespace {

// Note [Where rank 0 serves the store]
// Without `zerotrain launch` nobody runs a store, so rank 0 serves it in its own process
// and every rank, rank 0 too, connects as a client. MASTER_ADDR and MASTER_PORT, when
// set, say where. Otherwise:
// - all ranks on one host (local world size == world size, Slurm or Open MPI): 127.0.0.1;
// - Slurm on several hosts: the first host of SLURM_STEP_NODELIST (srun puts task 0
//   there), else of SLURM_JOB_NODELIST; rank 0 checks that it runs on that host;
// - the port: one of 20000..31999 hashed from the job's identity (Slurm's job and step
//   id, Open MPI's job id), which every rank of the job sees alike. The range stays below
//   Linux's ephemeral ports (32768 and up), so an outgoing connection rarely holds it.
// torchrun-style variables set by hand or by a job operator have no such defaults.
//
// Note [Store token without a launcher]
// The launcher draws a fresh token for its ranks. Without it the ranks must share one:
// ZEROTRAIN_STORE_TOKEN, exported before srun or mpirun (which pass the environment on;
// mpirun across hosts needs `-x ZEROTRAIN_STORE_TOKEN`). When it is not set, a store
// bound to loopback is still allowed, since only this host can reach it; its token is
// then the job's identity, not a secret but enough that two jobs on one host whose ports
// collide refuse each other instead of mixing their keys. A store reachable from other
// hosts without a token is refused, naming the variable to set.

constexpr int kDerivedPortBase = 20000;
constexpr int kDerivedPortCount = 12000;

// The variables whose presence means torchrun itself started this process.
constexpr const char* kTorchElasticVars[] = {"TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
                                             "TORCHELASTIC_MAX_RESTARTS",
                                             "TORCHELASTIC_USE_AGENT_STORE"};

[[noreturn]] void fail(const std::string& name, const std::string& value,
                       const std::string& expected) {
  throw UsageError("environment variable " + name + "='" + value + "': expected " + expected);
}

bool is_numeric_address(const std::string& address) {
  unsigned char bytes[16];
  return ::inet_pton(AF_INET, address.c_str(), bytes) == 1 ||
         ::inet_pton(AF_INET6, address.c_str(), bytes) == 1;
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

[[noreturn]] void refuse_torchrun(const char* variable) {
  throw UsageError(
      std::string("started by torchrun (") + variable +
      " is set): torchrun serves its own store on MASTER_PORT, and it speaks PyTorch's "
      "protocol, not zerotrain's. Start the ranks with `zerotrain launch` instead; it takes "
      "the same options: zerotrain launch --nnodes N --node-rank K --nproc-per-node P "
      "--master-addr HOST --master-port PORT CONFIG");
}

// What all ranks of one job share: the identity its default port and token come from.
// Empty when the engine offers none.
std::string job_identity(const EnvLookup& lookup, RankEngine engine) {
  if (engine == RankEngine::kSlurm) {
    const std::optional<std::string> job = lookup("SLURM_JOB_ID");
    if (!job) return "";
    return "slurm-job-" + *job + "." + lookup("SLURM_STEP_ID").value_or("-");
  }
  if (engine == RankEngine::kOpenMpi) {
    if (auto job = lookup("OMPI_MCA_ess_base_jobid")) return "openmpi-job-" + *job;
    if (auto space = lookup("PMIX_NAMESPACE")) return "openmpi-job-" + *space;
  }
  return "";
}

class StoreLocator {
 public:
  StoreLocator(const EnvLookup& lookup, RankEngine engine, RankEnv& env)
      : lookup_(lookup), engine_(engine), env_(env) {}

  void locate() {
    // The launcher sets RANK and the rest with its marker; a marker beside Slurm's or Open
    // MPI's variables alone was inherited from elsewhere and means nothing.
    const bool launched = engine_ == RankEngine::kTorchrunNames &&
                          lookup_(kLauncherHostsStoreEnvVar).value_or("") == "1";
    env_.store_host = launched ? StoreHost::kLauncher : StoreHost::kRankZero;
    if (engine_ == RankEngine::kTorchrunNames && !launched) {
      for (const char* variable : kTorchElasticVars) {
        if (lookup_(variable)) refuse_torchrun(variable);
      }
    }
    identity_ = launched ? "" : job_identity(lookup_, engine_);
    read_master_addr(launched);
    read_master_port(launched);
    if (launched) {
      env_.store_token = lookup_(comm::kStoreTokenEnvVar).value_or("");
    } else {
      choose_bind_address_and_token();
    }
  }

 private:
  // srun and mpirun set neither variable; the job script may have to.
  std::string advice() const {
    switch (engine_) {
      case RankEngine::kSlurm:
        return "rank 0 serves the store, on the job's first host and a port derived from "
               "SLURM_JOB_ID unless MASTER_ADDR and MASTER_PORT say otherwise";
      case RankEngine::kOpenMpi:
        return "rank 0 serves the store; with ranks on several hosts, export MASTER_ADDR=<rank "
               "0's host> and pass it on with `mpirun -x MASTER_ADDR` (MASTER_PORT likewise, "
               "or it is derived from Open MPI's job id)";
      case RankEngine::kTorchrunNames:
        break;
    }
    return "a run of several ranks needs MASTER_ADDR and MASTER_PORT";
  }

  [[noreturn]] void missing(const char* variable, const std::string& why) const {
    throw UsageError("environment variable " + std::string(variable) + " is not set (" +
                     env_.source + "'s variables are; " + why + ")");
  }

  void read_master_addr(bool launched) {
    if (const std::optional<std::string> addr = lookup_("MASTER_ADDR")) {
      if (addr->empty()) fail("MASTER_ADDR", *addr, "a host name or address");
      env_.master_addr = *addr;
      env_.master_addr_origin = "set by MASTER_ADDR";
      return;
    }
    if (env_.world_size == 1) return;
    if (launched || engine_ == RankEngine::kTorchrunNames) missing("MASTER_ADDR", advice());
    if (env_.local_world_size == env_.world_size) {
      env_.master_addr = "127.0.0.1";
      env_.master_addr_origin = "all " + std::to_string(env_.world_size) + " ranks on one host";
      return;
    }
    if (engine_ != RankEngine::kSlurm) missing("MASTER_ADDR", advice());
    master_from_slurm_nodelist();
  }

  void master_from_slurm_nodelist() {
    for (const char* variable : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      const std::optional<std::string> list = lookup_(variable);
      if (!list) continue;
      env_.master_addr = expand_slurm_nodelist(*list, variable).front();
      env_.master_addr_origin = std::string("the first host of ") + variable;
      const std::optional<std::string> node = lookup_("SLURMD_NODENAME");
      if (env_.rank == 0 && node && *node != env_.master_addr) {
        throw UsageError("rank 0 runs on " + *node + ", not on " + env_.master_addr + " (" +
                         env_.master_addr_origin +
                         "), where the other ranks look for its store: export "
                         "MASTER_ADDR=<rank 0's host> for this task distribution");
      }
      return;
    }
    missing("MASTER_ADDR",
            "nor is SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, which name the "
            "host of rank 0's store; export MASTER_ADDR=<rank 0's host>");
  }

  void read_master_port(bool launched) {
    if (const std::optional<std::string> port = lookup_("MASTER_PORT")) {
      env_.master_port = parse_port(*port, env_.world_size > 1 ? 1 : 0);
      env_.master_port_origin = "set by MASTER_PORT";
      return;
    }
    if (env_.world_size == 1) return;
    if (launched || engine_ == RankEngine::kTorchrunNames) missing("MASTER_PORT", advice());
    if (identity_.empty()) {
      missing("MASTER_PORT",
              std::string("nor is ") +
                  (engine_ == RankEngine::kSlurm ? "SLURM_JOB_ID"
                                                 : "OMPI_MCA_ess_base_jobid or PMIX_NAMESPACE") +
                  ", from which rank 0 would derive its store's port; export MASTER_PORT=<a "
                  "free port> for every rank");
    }
    env_.master_port = kDerivedPortBase + static_cast<int>(fnv1a(identity_) % kDerivedPortCount);
    env_.master_port_origin = engine_ == RankEngine::kSlurm
                                  ? "derived from SLURM_JOB_ID and SLURM_STEP_ID"
                                  : "derived from Open MPI's job id";
  }

  static int parse_port(const std::string& value, int min) {
    int parsed = 0;
    const char* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
    if (value.empty() || ec != std::errc() || ptr != end || parsed < min || parsed > 65535) {
      fail("MASTER_PORT", value, "an integer in " + std::to_string(min) + "..65535");
    }
    return parsed;
  }

  void choose_bind_address_and_token() {
    const std::string& addr = env_.master_addr;
    env_.store_bind_address = addr == "localhost"        ? "127.0.0.1"
                              : is_numeric_address(addr) ? addr
                                                         : "0.0.0.0";
    const std::string token = lookup_(comm::kStoreTokenEnvVar).value_or("");
    if (!token.empty()) {
      env_.store_token = token;
    } else if (env_.world_size == 1 || is_loopback_address(env_.store_bind_address)) {
      env_.store_token = identity_;
    } else {
      throw UsageError(std::string(comm::kStoreTokenEnvVar) +
                       " is not set: without `zerotrain launch`, rank 0 serves the store at " +
                       describe_store_location(env_) + ", listening on " + env_.store_bind_address +
                       ", which other hosts can reach, so every rank needs the same secret. "
                       "Export one before starting the ranks, e.g. export " +
                       comm::kStoreTokenEnvVar +
                       "=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n') (srun passes it on; "
                       "add `-x " +
                       comm::kStoreTokenEnvVar + "` to mpirun across hosts)");
    }
  }

  const EnvLookup& lookup_;
  RankEngine engine_;
  RankEnv& env_;
  std::string identity_;
};

}  // namespace

bool is_loopback_address(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

std::string describe_store_location(const RankEnv& env) {
  return env.master_addr + ":" + std::to_string(env.master_port) +
         " (host: " + env.master_addr_origin + "; port: " + env.master_port_origin + ")";
}

void locate_store(const EnvLookup& lookup, RankEngine engine, RankEnv& env) {
  StoreLocator(lookup, engine, env).locate();
}

}  // namespace zt::launch
