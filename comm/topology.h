// Topology: which node each rank of the world runs on and its place there (local rank), as
// every rank agrees after the rendezvous. Communicators ask it which peers share their node;
// strategies build their node-local and cross-node groups from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zt::comm {

// What one rank knows of where it runs: the node index and local rank its launcher gave
// (GROUP_RANK, SLURM_NODEID; LOCAL_RANK, SLURM_LOCALID, ...), when it gave them, and its
// host name.
struct NodeIdentity {
  std::optional<int> node_index;
  std::optional<int> local_rank;
  std::string host_name;
};

class Topology {
 public:
  // One node holding all `world_size` ranks (local rank = rank).
  static Topology single_node(int world_size);
  // Ranks in blocks of `ranks_per_node` (rank r on node r / ranks_per_node; the last node
  // holds the remainder), as `zerotrain launch` and torchrun place them.
  static Topology blocks(int world_size, int ranks_per_node);
  // From every rank's identity, indexed by rank (Note [Numbering nodes]). Throws CommError
  // when the identities contradict each other (two ranks of one node with one local rank).
  static Topology from_identities(const std::vector<NodeIdentity>& identities);

  int world_size() const { return static_cast<int>(node_of_rank_.size()); }
  int node_count() const { return static_cast<int>(ranks_of_node_.size()); }
  int node_of(int rank) const;
  int local_rank_of(int rank) const;
  bool same_node(int rank_a, int rank_b) const { return node_of(rank_a) == node_of(rank_b); }
  // The ranks on `node`, in local-rank order.
  const std::vector<int>& ranks_on(int node) const;
  // Every rank's node, by rank (what Communicator::place_ranks takes for the world).
  const std::vector<int>& nodes_by_rank() const { return node_of_rank_; }
  int ranks_per_node(int node) const { return static_cast<int>(ranks_on(node).size()); }
  // Whether every node holds the same number of ranks (hybrid sharding needs it).
  bool equal_nodes() const;
  // "1 node of 4 ranks", "2 nodes of 4 ranks", "3 nodes of 4, 4, 2 ranks".
  std::string describe() const;

 private:
  Topology(std::vector<int> node_of_rank, std::vector<int> local_rank_of_rank);

  std::vector<int> node_of_rank_;
  std::vector<int> local_rank_of_rank_;
  std::vector<std::vector<int>> ranks_of_node_;  // [node][local rank] = rank
};

}  // namespace zt::comm
