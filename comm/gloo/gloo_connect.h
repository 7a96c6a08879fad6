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
// rendezvous), then deletes this rank's keys, so `key_prefix` can be used again later.
// The context's timeout bounds every later Gloo wait. Throws CommError or TimeoutError
// naming the group and rank.
std::shared_ptr<::gloo::Context> connect_gloo_context(Store& store, const std::string& key_prefix,
                                                      int rank, int world_size,
                                                      const GlooEndpoint& endpoint,
                                                      std::chrono::milliseconds timeout);

}  // namespace zt::comm
