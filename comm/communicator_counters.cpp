// Communicator::counters: the bytes a backend counted per peer, told apart by the peers'
// nodes (place_ranks), and the sums over kinds.
#include <numeric>
#include <string>
#include <utility>

#include "comm/communicator.h"
#include "core/error.h"

namespace zt::comm {

// Note [Counting bytes by node]
// A backend counts what each op sent to each peer (OpCounters, by the peer's rank in the
// communicator), and counters() sorts those bytes by the peer's node, so the bytes inside
// the node and across nodes add up to the total by construction. Who gets what:
// - Our ring algorithms (Gloo's reduce-scatter and all-gather, all-reduce as the two in
//   turn, Note [Ring collectives]) send everything to the right-hand neighbour, rank r+1.
//   On nodes holding consecutive ranks (Topology::blocks, as launchers place them) a ring
//   of N nodes crosses a node boundary N times: the last rank of each node sends its
//   (n-1)/n of the buffer across, every other rank sends inside its node.
// - Gloo's broadcast is a binomial tree: a rank sends the whole buffer to each of its
//   children (binomial_broadcast_peers), some of which may be on other nodes.
// - NCCL picks its own rings and trees from the hardware; its bytes are counted as the
//   ring in rank order would send them (everything to rank r+1; broadcast pipelined along
//   that ring), as before the split by node. Its rings cross nodes as many times as ours on
//   a block layout but not necessarily from the same ranks, so NCCL's split by node is a
//   model of its traffic, not a measurement. The meta communicator counts what Gloo would
//   (NCCL's broadcast when it plays an NCCL rank), from the nodes the estimator places.
// - Barriers send no payload.
// A rank learns the nodes from place_ranks. RankSession agrees on the Topology only after
// its lanes' rendezvous (the one a launcher watches for ranks that never come), so the
// lanes are placed after they connect; counting per peer is what lets that happen at any
// time. Communicator::split places its group's communicator from the parent's nodes of
// the members. Unplaced, every rank counts as on one node: a single-node job's bytes are
// all inside the node.

std::uint64_t CommCounters::total_bytes() const {
  return std::accumulate(bytes_sent.begin(), bytes_sent.end(), std::uint64_t{0});
}

std::uint64_t CommCounters::total_cross_node_bytes() const {
  return std::accumulate(cross_node_bytes_sent.begin(), cross_node_bytes_sent.end(),
                         std::uint64_t{0});
}

CommCounters& CommCounters::operator+=(const CommCounters& other) {
  for (std::size_t k = 0; k < kCollectiveKindCount; ++k) {
    bytes_sent[k] += other.bytes_sent[k];
    cross_node_bytes_sent[k] += other.cross_node_bytes_sent[k];
    ops[k] += other.ops[k];
  }
  return *this;
}

void Communicator::place_ranks(std::vector<int> node_of_rank) {
  ZT_CHECK(static_cast<int>(node_of_rank.size()) == world_size(),
           "place_ranks with the nodes of " + std::to_string(node_of_rank.size()) +
               " ranks for a communicator of " + std::to_string(world_size()));
  std::lock_guard lock(placement_mutex_);
  node_of_rank_ = std::move(node_of_rank);
}

std::vector<int> Communicator::rank_nodes() const {
  std::lock_guard lock(placement_mutex_);
  return node_of_rank_;
}

CommCounters Communicator::counters() const {
  const PeerCounters peers = peer_counters();
  const std::vector<int> nodes = rank_nodes();
  const int me = rank();
  CommCounters counters;
  counters.ops = peers.ops;
  for (std::size_t peer = 0; peer < peers.bytes_to_rank.size(); ++peer) {
    const bool cross = !nodes.empty() && nodes[peer] != nodes[static_cast<std::size_t>(me)];
    for (std::size_t k = 0; k < kCollectiveKindCount; ++k) {
      const std::uint64_t bytes = peers.bytes_to_rank[peer][k];
      counters.bytes_sent[k] += bytes;
      if (cross) counters.cross_node_bytes_sent[k] += bytes;
    }
  }
  return counters;
}

}  // namespace zt::comm
