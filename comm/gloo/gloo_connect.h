// Connecting a group of ranks into one full-mesh Gloo context over TCP, rendezvousing
// through our Store.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/store/store.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace zt::comm {

struct GlooEndpoint {
  std::string bind_address;  // host name or address to listen on
  std::string interface;     // network interface instead of bind_address, when not empty
};

// Returns once every rank of the group is connected to every other (a barrier ends the
// rendezvous), then deletes this rank's keys, so `key_prefix` can be used again later;
// its joined key (rendezvous_keys.h) stays. The context's timeout bounds every later Gloo
// wait. Every status_interval (0: never) spent waiting it says on stderr which ranks it
// waits for. Throws CommError or TimeoutError naming the group, the rank and the ranks
// it waited for.
std::shared_ptr<::gloo::Context> connect_gloo_context(
    Store& store, const std::string& key_prefix, int rank, int world_size,
    const GlooEndpoint& endpoint, std::chrono::milliseconds timeout,
    std::chrono::milliseconds status_interval = std::chrono::milliseconds(0));

}  // namespace zt::comm
