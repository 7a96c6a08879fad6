// The all-to-all on Gloo's unbound buffers: every rank sends a chunk straight to every peer
// (Note [Pairwise exchange]).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "comm/gloo/op_counters.h"
#include "comm/gloo/ring.h"

namespace zt::comm {

// Note [Pairwise exchange]
// `input` and `output` hold world_size chunks of `chunk_bytes`. Every receive is posted
// first, each into its chunk of the output (chunk i from rank i), then every send from
// the input (chunk j to rank j), starting with the right-hand neighbour and going round,
// so at any moment the ranks' sends are spread over all peers rather than all aimed at
// rank 0. There is no forwarding: each chunk crosses the network once, from its owner to
// its destination, so a rank sends (n-1) chunks and nothing passes through a third rank
// (which is what makes it the exchange qgZ needs). Messages are tagged with the op's
// sequence number and the sender's rank (Note [Ring slots]). Returns the bytes sent to each
// peer.
std::vector<PeerBytes> pairwise_all_to_all(const RingOp& op, const void* input, void* output,
                                           std::size_t chunk_bytes);

}  // namespace zt::comm
