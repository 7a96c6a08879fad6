// ShardGroups: splitting the lanes into shard groups and replica groups.
#include "sharding/shard_groups.h"

#include <string>
#include <vector>

#include "core/error.h"

namespace zt::zero {
namespace {

int resolved_group_size(const comm::CommLanes& lanes, int group_size) {
  const int world = lanes.world_size();
  const int size = group_size == 0 ? world : group_size;
  ZT_CHECK(size > 0 && world % size == 0,
           "shard group size " + std::to_string(size) + " does not divide the world of " +
               std::to_string(world) + " ranks (check_shard_group_size refuses it)");
  return size;
}

// Every rank's request, the same on every rank, so the split exchanges nothing (and the
// estimator's meta communicator can make it): groups of contiguous ranks...
std::vector<comm::SplitRequest> shard_group_requests(int world, int group_size) {
  std::vector<comm::SplitRequest> requests(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) requests[static_cast<std::size_t>(r)] = {r / group_size, r};
  return requests;
}

// ... the ranks of one place in every group ...
std::vector<comm::SplitRequest> replica_requests(int world, int group_size) {
  std::vector<comm::SplitRequest> requests(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) requests[static_cast<std::size_t>(r)] = {r % group_size, r};
  return requests;
}

// ... and hpZ's groups of contiguous ranks: split from the world's lane, they lie inside the
// shard groups because their size divides the group's.
std::unique_ptr<comm::Communicator> split_hpz_groups(const comm::CommLanes& lanes, int group_size,
                                                     int partition_size) {
  if (partition_size <= 1 || partition_size >= group_size) return nullptr;
  ZT_CHECK(group_size % partition_size == 0,
           "hpZ partition size " + std::to_string(partition_size) +
               " does not divide the shard group of " + std::to_string(group_size) +
               " ranks (check_hpz_partition_size refuses it)");
  return lanes.parameters.split(shard_group_requests(lanes.world_size(), partition_size));
}

// The group's ranks per node for qgZ's two hops: L when every node holds L contiguous ranks
// of the group (group rank g on the group's node g / L), else the whole group, whose one
// all-to-all is then both hops. Unplaced ranks count as one node.
int exchange_local_size(const comm::Communicator& group) {
  const std::vector<int> nodes = group.rank_nodes();
  const int size = group.world_size();
  if (nodes.empty()) return size;
  int local = 1;
  while (local < size && nodes[static_cast<std::size_t>(local)] == nodes[0]) ++local;
  if (size % local != 0) return size;
  for (int g = 0; g < size; ++g) {
    // Same node as the group's first rank of its block of L, and a new node at each block.
    const int first = g - g % local;
    const bool same = nodes[static_cast<std::size_t>(g)] == nodes[static_cast<std::size_t>(first)];
    const bool fresh = first == 0 || nodes[static_cast<std::size_t>(first)] !=
                                         nodes[static_cast<std::size_t>(first - 1)];
    if (!same || !fresh) return size;
  }
  return local;
}

std::vector<comm::SplitRequest> grid_requests(int size, int local, bool by_node) {
  std::vector<comm::SplitRequest> requests(static_cast<std::size_t>(size));
  for (int g = 0; g < size; ++g) {
    requests[static_cast<std::size_t>(g)] = {by_node ? g / local : g % local, g};
  }
  return requests;
}

}  // namespace

ShardGroups::ShardGroups(comm::CommLanes lanes, int group_size, int hpz_partition_size,
                         bool gradient_exchange)
    : lanes_(lanes),
      group_size_(resolved_group_size(lanes, group_size)),
      rank_in_group_(lanes.rank() % group_size_),
      replica_count_(lanes.world_size() / group_size_),
      replica_(lanes.rank() / group_size_),
      group_parameters_(
          hybrid() ? lanes.parameters.split(shard_group_requests(lanes.world_size(), group_size_))
                   : nullptr),
      // Lanes that are one communicator stay one queue inside the group too.
      group_gradients_(
          hybrid() && &lanes.gradients != &lanes.parameters
              ? lanes.gradients.split(shard_group_requests(lanes.world_size(), group_size_))
              : nullptr),
      replicas_(hybrid() ? lanes.gradients.split(replica_requests(lanes.world_size(), group_size_))
                         : nullptr),
      secondary_(split_hpz_groups(lanes, group_size_, hpz_partition_size)),
      parameters_(group_parameters_ ? *group_parameters_ : lanes.parameters),
      gradients_(group_gradients_    ? *group_gradients_
                 : group_parameters_ ? *group_parameters_
                                     : lanes.gradients) {
  if (hybrid()) {
    ZT_CHECK(parameters_.world_size() == group_size_ && parameters_.rank() == rank_in_group_,
             "the shard group's split does not match the mesh");
    ZT_CHECK(replicas_->world_size() == replica_count_ && replicas_->rank() == replica_,
             "the replica group's split does not match the mesh");
  }
  if (gradient_exchange) {
    const int size = gradients_.world_size();
    const int local = exchange_local_size(gradients_);
    if (local > 1 && local < size) {
      node_local_ = gradients_.split(grid_requests(size, local, true));
      cross_node_ = gradients_.split(grid_requests(size, local, false));
      exchange_ = {node_local_.get(), cross_node_.get()};
    } else if (local == size) {
      exchange_ = {&gradients_, nullptr};  // one node: one hop, inside it
    } else {
      exchange_ = {nullptr, &gradients_};  // a rank per node: one hop, across them
    }
  }
}

comm::CommCounters ShardGroups::counters() const {
  comm::CommCounters total = lanes_.counters();
  for (const auto* split : {&group_parameters_, &group_gradients_, &replicas_, &secondary_,
                            &node_local_, &cross_node_}) {
    if (*split) total += (*split)->counters();
  }
  return total;
}

}  // namespace zt::zero
