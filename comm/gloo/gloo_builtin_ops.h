// The collectives Gloo's own new-style algorithms run for us: broadcast (binomial tree)
// and barrier. Nothing here is old-style: an old-style algorithm pins a context's socket
// buffers to its first message's size, and every new-style op after it crawls.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/gloo/op_counters.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace zt::comm {

// The ranks `rank` sends the whole buffer to in Gloo's binomial-tree broadcast from `root`
// (gloo/broadcast.cc): the root sends to ceil(log2 n) ranks, leaves to none; n-1 in all.
std::vector<int> binomial_broadcast_peers(int rank, int world_size, int root);

// Overwrites `bytes` at `data` with root's; returns the payload bytes this rank sent to
// each peer.
std::vector<PeerBytes> gloo_broadcast(const std::shared_ptr<::gloo::Context>& context, void* data,
                                      std::size_t bytes, int root, std::uint32_t tag,
                                      std::chrono::milliseconds timeout);

void gloo_barrier(const std::shared_ptr<::gloo::Context>& context, std::uint32_t tag,
                  std::chrono::milliseconds timeout);

}  // namespace zt::comm
