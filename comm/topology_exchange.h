// Agreeing on the Topology at rendezvous: every rank publishes its NodeIdentity through the
// store and reads every other's, so all ranks build the same Topology.
#pragma once

#include <chrono>
#include <string>

#include "comm/store/store.h"
#include "comm/topology.h"

namespace zt::comm {

// This host's name (gethostname); "localhost" when it has none.
std::string this_host_name();

// Collective over the `world_size` ranks sharing `store`: publishes `mine` under
// "<key_prefix>topology/<rank>", waits (at most `timeout`) for every rank's and returns
// Topology::from_identities of them. The keys stay, as the memory report's do: a store
// lives for one attempt of a job. Throws TimeoutError naming the ranks that never reported,
// CommError when a record is not one (another program's key).
Topology exchange_topology(Store& store, const std::string& key_prefix, int rank, int world_size,
                           const NodeIdentity& mine, std::chrono::milliseconds timeout);

}  // namespace zt::comm
