// Topology: numbering nodes and local ranks from what every rank reported, and the queries.
#include "comm/topology.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace zt::comm {
namespace {

// Note [Numbering nodes]
// A rank's node comes from its launcher when every rank has one (GROUP_RANK of `zerotrain
// launch` and torchrun, SLURM_NODEID): node indices are those, renumbered densely in
// ascending order (indices 0 and 2 become nodes 0 and 1). The launcher's word wins over host
// names, which may repeat across nodes (network namespaces of one host, containers named
// alike). When any rank lacks one (Open MPI exports no node index:
// OMPI_COMM_WORLD_NODE_RANK is a rank on the node, counted across jobs), every rank's node
// comes from its host name instead: nodes are numbered by first appearance in rank order,
// so rank 0's host is node 0, the host of the lowest rank not on it node 1, and so on.
// Local ranks are the launcher's when every rank has one and they number each node's ranks
// 0 .. n-1; otherwise a rank's place among its node's ranks in rank order. Nodes may hold
// different numbers of ranks; what cannot run on such a layout refuses it (equal_nodes()).
std::vector<int> number_nodes(const std::vector<NodeIdentity>& identities) {
  const bool launcher_says =
      std::all_of(identities.begin(), identities.end(),
                  [](const NodeIdentity& identity) { return identity.node_index.has_value(); });
  std::vector<int> node_of_rank;
  node_of_rank.reserve(identities.size());
  if (launcher_says) {
    std::map<int, int> dense;  // launcher's index -> node, ascending
    for (const NodeIdentity& identity : identities) dense.emplace(*identity.node_index, 0);
    int next = 0;
    for (auto& [index, node] : dense) node = next++;
    for (const NodeIdentity& identity : identities)
      node_of_rank.push_back(dense[*identity.node_index]);
    return node_of_rank;
  }
  std::map<std::string, int> node_of_host;
  for (const NodeIdentity& identity : identities) {
    const auto [it, inserted] =
        node_of_host.emplace(identity.host_name, static_cast<int>(node_of_host.size()));
    node_of_rank.push_back(it->second);
  }
  return node_of_rank;
}

// The launcher's local ranks when they number every node's ranks 0 .. n-1, else nullopt.
std::optional<std::vector<int>> launcher_local_ranks(const std::vector<NodeIdentity>& identities,
                                                     const std::vector<int>& node_of_rank) {
  std::vector<int> local_ranks;
  std::map<int, std::vector<bool>> taken;  // node -> which local ranks are used
  std::map<int, int> size_of_node;
  for (int node : node_of_rank) ++size_of_node[node];
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    const std::optional<int> local = identities[rank].local_rank;
    const int node = node_of_rank[rank];
    std::vector<bool>& used = taken[node];
    used.resize(static_cast<std::size_t>(size_of_node[node]), false);
    if (!local || *local < 0 || *local >= size_of_node[node]) return std::nullopt;
    if (used[static_cast<std::size_t>(*local)]) {
      throw CommError("ranks disagree about their nodes: two ranks of node " +
                      std::to_string(node) + " (host '" + identities[rank].host_name +
                      "') both say they are local rank " + std::to_string(*local) +
                      "; check the launcher's LOCAL_RANK / GROUP_RANK (or SLURM_LOCALID / "
                      "SLURM_NODEID) of rank " +
                      std::to_string(rank));
    }
    used[static_cast<std::size_t>(*local)] = true;
    local_ranks.push_back(*local);
  }
  return local_ranks;
}

}  // namespace

Topology::Topology(std::vector<int> node_of_rank, std::vector<int> local_rank_of_rank)
    : node_of_rank_(std::move(node_of_rank)), local_rank_of_rank_(std::move(local_rank_of_rank)) {
  ZT_CHECK(!node_of_rank_.empty() && node_of_rank_.size() == local_rank_of_rank_.size(),
           "a topology of " + std::to_string(node_of_rank_.size()) + " ranks");
  const int nodes = *std::max_element(node_of_rank_.begin(), node_of_rank_.end()) + 1;
  ranks_of_node_.resize(static_cast<std::size_t>(nodes));
  for (int rank = 0; rank < world_size(); ++rank) {
    std::vector<int>& ranks = ranks_of_node_[static_cast<std::size_t>(node_of(rank))];
    const auto local = static_cast<std::size_t>(local_rank_of(rank));
    if (ranks.size() <= local) ranks.resize(local + 1, -1);
    ZT_CHECK(ranks[local] == -1, "two ranks with local rank " + std::to_string(local));
    ranks[local] = rank;
  }
  for (const std::vector<int>& ranks : ranks_of_node_) {
    ZT_CHECK(!ranks.empty() && std::find(ranks.begin(), ranks.end(), -1) == ranks.end(),
             "a node without ranks, or with a gap in its local ranks");
  }
}

Topology Topology::single_node(int world_size) { return blocks(world_size, world_size); }

Topology Topology::blocks(int world_size, int ranks_per_node) {
  ZT_CHECK(world_size >= 1 && ranks_per_node >= 1, "a topology of " + std::to_string(world_size) +
                                                       " ranks in nodes of " +
                                                       std::to_string(ranks_per_node));
  std::vector<int> nodes;
  std::vector<int> locals;
  for (int rank = 0; rank < world_size; ++rank) {
    nodes.push_back(rank / ranks_per_node);
    locals.push_back(rank % ranks_per_node);
  }
  return Topology(std::move(nodes), std::move(locals));
}

Topology Topology::from_identities(const std::vector<NodeIdentity>& identities) {
  ZT_CHECK(!identities.empty(), "a topology of no ranks");
  std::vector<int> node_of_rank = number_nodes(identities);
  std::optional<std::vector<int>> local_ranks = launcher_local_ranks(identities, node_of_rank);
  if (!local_ranks) {
    local_ranks.emplace();
    std::map<int, int> seen;  // node -> ranks met so far
    for (int node : node_of_rank) local_ranks->push_back(seen[node]++);
  }
  return Topology(std::move(node_of_rank), std::move(*local_ranks));
}

int Topology::node_of(int rank) const {
  ZT_CHECK(rank >= 0 && rank < world_size(),
           "rank " + std::to_string(rank) + " of a topology of " + std::to_string(world_size()));
  return node_of_rank_[static_cast<std::size_t>(rank)];
}

int Topology::local_rank_of(int rank) const {
  ZT_CHECK(rank >= 0 && rank < world_size(),
           "rank " + std::to_string(rank) + " of a topology of " + std::to_string(world_size()));
  return local_rank_of_rank_[static_cast<std::size_t>(rank)];
}

const std::vector<int>& Topology::ranks_on(int node) const {
  ZT_CHECK(node >= 0 && node < node_count(),
           "node " + std::to_string(node) + " of " + std::to_string(node_count()));
  return ranks_of_node_[static_cast<std::size_t>(node)];
}

bool Topology::equal_nodes() const {
  return std::all_of(
      ranks_of_node_.begin(), ranks_of_node_.end(),
      [&](const std::vector<int>& ranks) { return ranks.size() == ranks_of_node_.front().size(); });
}

std::string Topology::describe() const {
  const int nodes = node_count();
  std::string text = std::to_string(nodes) + (nodes == 1 ? " node of " : " nodes of ");
  if (equal_nodes()) return text + std::to_string(ranks_per_node(0)) + " ranks";
  for (int node = 0; node < nodes; ++node) {
    text += (node > 0 ? ", " : "") + std::to_string(ranks_per_node(node));
  }
  return text + " ranks";
}

}  // namespace zt::comm
