// ShardGroups: the two-dimensional mesh of hybrid sharding (HSDP, MiCS; zero.shard_group_size).
// The world's ranks form groups of contiguous ranks (a node when the size is the ranks per
// node); stages 1-3 shard inside a group and replicate across groups. This part owns the
// communicators of that mesh and the rank's place in it; the strategy asks it where to send
// each collective.
#pragma once

#include <memory>

#include "comm/comm_lanes.h"
#include "comm/communicator.h"

namespace zt::zero {

// Note [Hybrid sharding]: with G = zero.shard_group_size ranks per group and R = world / G
// replicas, rank r sits in group r / G at place r % G. Each group is a full ZeRO world of G
// ranks: the layout is padded for G, the shard plan cuts every segment into G slices, the
// reduce-scatters and all-gathers run on the group's split of their lane. The ranks holding
// one place in every group (r % G equal) hold the same shard: after the group's
// reduce-scatter, the reduced slices are all-reduced across them (a split of the gradient
// lane), so every replica updates its shard with the world's gradient and the replicas stay
// bitwise equal. A gradient norm is summed over one group only (replica 0's ranks report
// their part, the others zero: the caller's sum over the world adds zeros, exactly). The
// control lane stays the world's (losses, norms). With G = world nothing is split: the lanes
// are used as they are, and the strategy runs exactly as without this key.
// The two hops of the quantized gradient reduce-scatter (Note [Quantized gradient
// reduce-scatters] in sharding/quantized_reduce_scatter.h) over a shard group of G = M x L
// ranks: M nodes of L ranks each, group rank g = node * L + local. A null hop has one rank.
struct GradientExchange {
  comm::Communicator* node_local = nullptr;  // the group's L ranks on this rank's node
  comm::Communicator* cross_node = nullptr;  // the M ranks of this local index, one per node
  int local_size() const { return node_local ? node_local->world_size() : 1; }
  int node_count() const { return cross_node ? cross_node->world_size() : 1; }
};

class ShardGroups {
 public:
  // `group_size` divides lanes.world_size() (the engine refuses other values with the key
  // named, check_shard_group_size); 0 means the world. Splits the lanes (collective: every
  // rank of the world constructs its ShardGroups in the same order relative to other splits).
  // `hpz_partition_size` > 1 (stage 3, dividing the group: check_hpz_partition_size) also
  // splits the parameter lane into groups of that many contiguous ranks for the secondary
  // shard (Note [The secondary shard] in sharding/secondary_shard.h).
  // `gradient_exchange` (qgZ) splits the gradient group into its node-local and cross-node
  // hops, from the nodes the lanes were placed on (Communicator::place_ranks).
  ShardGroups(comm::CommLanes lanes, int group_size, int hpz_partition_size = 0,
              bool gradient_exchange = false);
  ShardGroups(const ShardGroups&) = delete;
  ShardGroups& operator=(const ShardGroups&) = delete;

  int group_size() const { return group_size_; }
  int rank_in_group() const { return rank_in_group_; }
  int replica_count() const { return replica_count_; }
  int replica() const { return replica_; }  // which group this rank's is, from 0
  bool hybrid() const { return replica_count_ > 1; }

  // All-gathers of parameters, inside the group.
  comm::Communicator& parameters() const { return parameters_; }
  // Reduce-scatters of gradients, inside the group.
  comm::Communicator& gradients() const { return gradients_; }
  // All-reduces of a reduced gradient shard across the replicas; null with one group.
  comm::Communicator* replicas() const { return replicas_.get(); }
  // All-gathers from the secondary shard, inside the rank's hpZ group; null without hpZ.
  comm::Communicator* secondary() const { return secondary_.get(); }
  // qgZ's hops inside the gradient group; both null unless asked for at construction.
  const GradientExchange& gradient_exchange() const { return exchange_; }
  // Whether this rank is in the first group: its ranks' shards are the ones that count once
  // (a gradient norm's parts, a checkpoint's files); the other groups hold copies of them.
  bool in_first_replica() const { return replica_ == 0; }
  // Bytes and ops of the world's lanes and of every split, summed.
  comm::CommCounters counters() const;

 private:
  comm::CommLanes lanes_;
  int group_size_;
  int rank_in_group_;
  int replica_count_;
  int replica_;
  std::unique_ptr<comm::Communicator> group_parameters_;  // null: the lane itself
  std::unique_ptr<comm::Communicator> group_gradients_;   // null: the lane itself (or parameters')
  std::unique_ptr<comm::Communicator> replicas_;
  std::unique_ptr<comm::Communicator> secondary_;  // hpZ groups; null without hpZ
  comm::Communicator& parameters_;
  comm::Communicator& gradients_;
  std::unique_ptr<comm::Communicator> node_local_;  // qgZ hops; null: the group itself, or none
  std::unique_ptr<comm::Communicator> cross_node_;
  GradientExchange exchange_;
};

}  // namespace zt::zero
