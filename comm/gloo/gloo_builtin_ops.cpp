// Broadcast and barrier through gloo::broadcast and gloo::barrier (Options API).
#include "comm/gloo/gloo_builtin_ops.h"

#include <gloo/barrier.h>
#include <gloo/broadcast.h>

#include <string>

#include "comm/gloo/gloo_errors.h"

namespace zt::comm {

std::vector<int> binomial_broadcast_peers(int rank, int world_size, int root) {
  // Mirrors gloo::broadcast: virtual rank 0 is the root; in round i, ranks whose low i+1
  // bits (but bit i) are clear exchange with the peer across bit i, the lower one sending.
  const int vrank = (rank - root + world_size) % world_size;
  int dims = 0;
  while ((1 << dims) < world_size) ++dims;
  int mask = (1 << dims) - 1;
  std::vector<int> peers;
  for (int i = 0; i < dims; ++i) {
    mask ^= 1 << i;
    if ((vrank & mask) != 0) continue;
    const int vpeer = vrank ^ (1 << i);
    if (vpeer >= world_size) continue;
    if ((vrank & (1 << i)) == 0) peers.push_back((vpeer + root) % world_size);
  }
  return peers;
}

std::vector<PeerBytes> gloo_broadcast(const std::shared_ptr<::gloo::Context>& context, void* data,
                                      std::size_t bytes, int root, std::uint32_t tag,
                                      std::chrono::milliseconds timeout) {
  if (bytes == 0) return {};  // every rank has the same size, so every rank skips
  try {
    ::gloo::BroadcastOptions options(context);
    options.setOutput(static_cast<std::uint8_t*>(data), bytes);
    options.setRoot(root);
    options.setTag(tag);
    options.setTimeout(timeout);
    ::gloo::broadcast(options);
  } catch (...) {
    rethrow_as_comm_error("broadcasting from rank " + std::to_string(root));
  }
  std::vector<PeerBytes> sent;
  for (int peer : binomial_broadcast_peers(context->rank, context->size, root)) {
    sent.push_back({peer, static_cast<std::uint64_t>(bytes)});
  }
  return sent;
}

void gloo_barrier(const std::shared_ptr<::gloo::Context>& context, std::uint32_t tag,
                  std::chrono::milliseconds timeout) {
  try {
    ::gloo::BarrierOptions options(context);
    options.setTag(tag);
    options.setTimeout(timeout);
    ::gloo::barrier(options);
  } catch (...) {
    rethrow_as_comm_error("waiting in the barrier");
  }
}

}  // namespace zt::comm
