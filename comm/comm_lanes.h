// CommLanes: the communicators a rank's training talks through, one ordered queue each, so
// traffic of one kind never waits behind another's. `control` carries the small reductions
// the loop waits on at once (loss, gradient norm), `parameters` the all-gathers of
// parameters, `gradients` the reduce-scatters and all-reduces of gradients. The lanes may
// all be one communicator (one queue, nothing overlaps across kinds) or each its own, with
// its own connections and queue (see create_comm_lanes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/communicator_factory.h"
#include "comm/store/store.h"

namespace zt::comm {

struct CommLanes {
  Communicator& control;
  Communicator& parameters;
  Communicator& gradients;

  // Every lane is `comm`.
  static CommLanes single(Communicator& comm) { return {comm, comm, comm}; }
  int rank() const { return control.rank(); }
  int world_size() const { return control.world_size(); }
  // Bytes sent (inside the node and across nodes) and ops per kind, summed over the
  // distinct communicators.
  CommCounters counters() const;
  // Communicator::place_ranks on every lane (each a communicator of the whole world).
  void place_ranks(const std::vector<int>& node_of_rank) const;
};

// One communicator per lane, owned.
class OwnedCommLanes {
 public:
  OwnedCommLanes(std::unique_ptr<Communicator> control, std::unique_ptr<Communicator> parameters,
                 std::unique_ptr<Communicator> gradients);
  CommLanes lanes() const { return {*control_, *parameters_, *gradients_}; }

 private:
  std::unique_ptr<Communicator> control_;
  std::unique_ptr<Communicator> parameters_;
  std::unique_ptr<Communicator> gradients_;
};

// Connects the three lanes of `rank` through `store`, as three groups named
// "<options.group_name>/control", ".../parameters" and ".../gradients", each a
// communicator of options.backend bound to options.device (create_communicator; with
// NCCL each lane has its own communicator and comm stream, so the lanes overlap on the
// device too).
OwnedCommLanes create_comm_lanes(Store& store, int rank, int world_size,
                                 const CommOptions& options = {});
// create_comm_lanes for the Gloo backend (options.backend must be kGloo).
OwnedCommLanes create_cpu_comm_lanes(Store& store, int rank, int world_size,
                                     const CommOptions& options = {});

// The group of the lane every rank connects first: whoever watches a rendezvous (the
// launcher naming ranks that never join) watches this one.
std::string first_lane_group_name(const std::string& group_name);

}  // namespace zt::comm
