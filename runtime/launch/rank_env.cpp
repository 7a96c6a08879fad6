// read_rank_env: recognising the launcher from its variables, parsing them strictly and
// checking that they describe one consistent place in the world; the store's place is
// store_location.cpp's.
#include "runtime/launch/rank_env.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "core/error.h"
#include "runtime/launch/store_location_internal.h"

namespace zt::launch {
namespace {

// Note [Open MPI before Slurm]
// Inside an sbatch script SLURM_PROCID=0 is set for the batch step itself, and processes
// that mpirun starts there inherit it, while mpirun sets OMPI_COMM_WORLD_* per process.
// So when both are present the Open MPI variables are the ones that describe this
// process; srun never sets OMPI_COMM_WORLD_*. torchrun's come first of all because
// torchrun (or `zerotrain launch`) may itself run under srun or mpirun, one per node.

// The names a launcher uses for the four numbers.
struct VariableNames {
  RankEngine engine;
  const char* source;
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;  // nullptr: Slurm, handled apart
  // The node's index, in order of preference; nullptr where the launcher has none.
  std::array<const char*, 2> node_rank;
};

constexpr VariableNames kTorchrun{
    RankEngine::kTorchrunNames, "torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    {"GROUP_RANK", "NODE_RANK"}};
constexpr VariableNames kOpenMpi{RankEngine::kOpenMpi,   "Open MPI",
                                 "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                 {nullptr, nullptr}};
constexpr VariableNames kSlurm{RankEngine::kSlurm,       "Slurm",        "SLURM_PROCID",
                               "SLURM_LOCALID",          "SLURM_NTASKS", nullptr,
                               {"SLURM_NODEID", nullptr}};

constexpr int kIntMax = std::numeric_limits<int>::max();

[[noreturn]] void fail(const std::string& name, const std::string& value,
                       const std::string& expected) {
  throw UsageError("environment variable " + name + "='" + value + "': expected " + expected);
}

// A whole decimal integer in [min, max]; anything else names the variable.
int parse_int(const std::string& name, const std::string& value, int min, int max) {
  int parsed = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (value.empty() || ec != std::errc() || ptr != end || parsed < min || parsed > max) {
    fail(name, value, "an integer in " + std::to_string(min) + ".." + std::to_string(max));
  }
  return parsed;
}

std::string require(const EnvLookup& lookup, const std::string& name, const char* source,
                    const char* why) {
  std::optional<std::string> value = lookup(name);
  if (!value) {
    throw UsageError("environment variable " + name + " is not set (" + source +
                     "'s variables are; " + why + ")");
  }
  return *value;
}

int require_int(const EnvLookup& lookup, const char* name, const char* source, int min) {
  return parse_int(name, require(lookup, name, source, "all of them are needed"), min, kIntMax);
}

// SLURM_NTASKS_PER_NODE when set (srun --ntasks-per-node), else the first count of
// SLURM_TASKS_PER_NODE, whose form is "4(x2),3": 4 tasks on each of 2 nodes, then 3.
int slurm_local_world_size(const EnvLookup& lookup) {
  if (std::optional<std::string> per_node = lookup("SLURM_NTASKS_PER_NODE")) {
    return parse_int("SLURM_NTASKS_PER_NODE", *per_node, 1, kIntMax);
  }
  const std::string tasks = require(lookup, "SLURM_TASKS_PER_NODE", "Slurm",
                                    "it or SLURM_NTASKS_PER_NODE gives the tasks per node");
  const std::string first = tasks.substr(0, tasks.find_first_of("(,"));
  if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) {
    fail("SLURM_TASKS_PER_NODE", tasks, "a task count such as '4' or '4(x2),3'");
  }
  return parse_int("SLURM_TASKS_PER_NODE", first, 1, kIntMax);
}

void check_consistent(const RankEnv& env, const VariableNames& names) {
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) throw UsageError("inconsistent " + std::string(names.source) + " variables: " + what);
  };
  const std::string lws = names.local_world_size ? names.local_world_size : "tasks per node";
  check(env.rank < env.world_size, std::string(names.rank) + "=" + std::to_string(env.rank) +
                                       " is not below " + names.world_size + "=" +
                                       std::to_string(env.world_size));
  check(env.local_rank < env.local_world_size,
        std::string(names.local_rank) + "=" + std::to_string(env.local_rank) + " is not below " +
            lws + "=" + std::to_string(env.local_world_size));
  check(env.local_world_size <= env.world_size, lws + "=" + std::to_string(env.local_world_size) +
                                                    " exceeds " + names.world_size + "=" +
                                                    std::to_string(env.world_size));
}

// Note [Slurm's batch step]
// A batch script (and an salloc shell) sees SLURM_PROCID=0 and the job's SLURM_NTASKS, but
// it is one process, not the tasks: only srun starts those, and each of them has a
// SLURM_STEP_ID. Taken at its word, the script would wait for ranks nobody starts.
void refuse_slurm_batch_step(const EnvLookup& lookup, const RankEnv& env) {
  if (env.world_size == 1 || lookup("SLURM_STEP_ID") || lookup("SLURM_STEPID")) return;
  throw UsageError(
      "SLURM_PROCID is set but SLURM_STEP_ID is not: this is Slurm's batch script "
      "(or an salloc shell) for a job of SLURM_NTASKS=" +
      std::to_string(env.world_size) +
      " tasks, not one of them. Start the ranks with srun: "
      "srun zerotrain train CONFIG ...");
}

RankEnv read_with(const EnvLookup& lookup, const VariableNames& names) {
  RankEnv env;
  env.source = names.source;
  env.rank = require_int(lookup, names.rank, names.source, 0);
  env.local_rank = require_int(lookup, names.local_rank, names.source, 0);
  env.world_size = require_int(lookup, names.world_size, names.source, 1);
  env.local_world_size = names.local_world_size
                             ? require_int(lookup, names.local_world_size, names.source, 1)
                             : slurm_local_world_size(lookup);
  for (const char* name : names.node_rank) {
    if (name == nullptr) break;
    if (std::optional<std::string> value = lookup(name)) {
      env.node_rank = parse_int(name, *value, 0, env.world_size - 1);
      break;
    }
  }
  check_consistent(env, names);
  if (names.engine == RankEngine::kSlurm) refuse_slurm_batch_step(lookup, env);
  locate_store(lookup, names.engine, env);
  return env;
}

}  // namespace

std::optional<RankEnv> read_rank_env(const EnvLookup& lookup) {
  if (lookup("RANK") || lookup("WORLD_SIZE")) return read_with(lookup, kTorchrun);
  if (lookup("OMPI_COMM_WORLD_RANK")) return read_with(lookup, kOpenMpi);
  if (lookup("SLURM_PROCID")) return read_with(lookup, kSlurm);
  return std::nullopt;
}

std::optional<RankEnv> read_rank_env() {
  return read_rank_env([](const std::string& name) -> std::optional<std::string> {
    // concurrency-mt-unsafe: read once at start-up, before any thread sets a variable.
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace zt::launch
