// Private to runtime/launch: where a rank's rendezvous store is, who serves it and with
// which token, from MASTER_ADDR/MASTER_PORT or the defaults of Slurm and Open MPI.
#pragma once

#include "runtime/launch/rank_env.h"

namespace zt::launch {

// Whose variables gave the rank numbers.
enum class RankEngine { kTorchrunNames, kOpenMpi, kSlurm };

// Fills master_addr, master_port (and their origins), store_host, store_bind_address and
// store_token of `env`, whose rank numbers are already read. Throws UsageError naming the
// variable and what to set when the store cannot be placed.
void locate_store(const EnvLookup& lookup, RankEngine engine, RankEnv& env);

}  // namespace zt::launch
