// Lane counters and the creation of one communicator per lane.
#include "comm/comm_lanes.h"

#include <string>
#include <utility>

#include "core/error.h"

namespace zt::comm {

CommCounters CommLanes::counters() const {
  CommCounters total;
  const Communicator* seen[3] = {nullptr, nullptr, nullptr};
  int count = 0;
  for (const Communicator* lane : {&control, &parameters, &gradients}) {
    bool repeated = false;
    for (int i = 0; i < count; ++i) repeated = repeated || seen[i] == lane;
    if (repeated) continue;
    seen[count++] = lane;
    total += lane->counters();
  }
  return total;
}

void CommLanes::place_ranks(const std::vector<int>& node_of_rank) const {
  for (Communicator* lane : {&control, &parameters, &gradients}) lane->place_ranks(node_of_rank);
}

OwnedCommLanes::OwnedCommLanes(std::unique_ptr<Communicator> control,
                               std::unique_ptr<Communicator> parameters,
                               std::unique_ptr<Communicator> gradients)
    : control_(std::move(control)),
      parameters_(std::move(parameters)),
      gradients_(std::move(gradients)) {}

namespace {
constexpr const char* kFirstLane = "control";
}  // namespace

std::string first_lane_group_name(const std::string& group_name) {
  return group_name + "/" + kFirstLane;
}

OwnedCommLanes create_comm_lanes(Store& store, int rank, int world_size,
                                 const CommOptions& options) {
  const auto lane = [&](const char* name) {
    CommOptions lane_options = options;
    lane_options.group_name = options.group_name + "/" + name;
    return create_communicator(store, rank, world_size, lane_options);
  };
  // Every rank connects the lanes in this order, so each rendezvous finds all its peers.
  auto control = lane(kFirstLane);
  auto parameters = lane("parameters");
  auto gradients = lane("gradients");
  return OwnedCommLanes(std::move(control), std::move(parameters), std::move(gradients));
}

}  // namespace zt::comm

namespace zt::comm {

OwnedCommLanes create_cpu_comm_lanes(Store& store, int rank, int world_size,
                                     const CommOptions& options) {
  ZT_CHECK(options.backend == CommBackend::kGloo,
           "create_cpu_comm_lanes asked for comm.backend = \"" +
               std::string(comm_backend_name(options.backend)) + "\"");
  return create_comm_lanes(store, rank, world_size, options);
}

}  // namespace zt::comm
