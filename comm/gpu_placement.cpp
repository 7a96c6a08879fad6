// Placements as text, and the shared-GPU check over all of a group's ranks.
#include "comm/gpu_placement.h"

#include <sstream>

namespace zt::comm {

std::string placement_text(const GpuPlacement& placement) {
  return placement.host + " " + placement.gpu + " " + placement.device;
}

std::optional<GpuPlacement> parse_placement(const std::string& text) {
  std::istringstream in(text);
  GpuPlacement placement;
  std::string rest;
  if (!(in >> placement.host >> placement.gpu >> placement.device) || (in >> rest)) {
    return std::nullopt;
  }
  return placement;
}

std::optional<std::string> shared_gpu_problem(const std::vector<GpuPlacement>& placements,
                                              int rank) {
  const GpuPlacement& own = placements.at(static_cast<std::size_t>(rank));
  std::vector<int> sharing;
  for (std::size_t r = 0; r < placements.size(); ++r) {
    const GpuPlacement& other = placements[r];
    if (other.host == own.host && other.gpu == own.gpu) sharing.push_back(static_cast<int>(r));
  }
  if (sharing.size() < 2) return std::nullopt;
  std::string ranks;
  for (std::size_t i = 0; i < sharing.size(); ++i) {
    ranks += (i == 0 ? "" : i + 1 == sharing.size() ? " and " : ", ") + std::to_string(sharing[i]);
  }
  return "ranks " + ranks + " all compute on one GPU (" + own.device + ", PCI bus " + own.gpu +
         ") on host " + own.host +
         ", and comm.backend = \"nccl\" needs a GPU per rank (NCCL says \"Duplicate GPU "
         "detected\"); set comm.backend = \"gloo\" to share a GPU between ranks, or give each "
         "rank its own (runtime.device_index = -1 takes LOCAL_RANK's; start at most as many "
         "ranks per node as it has GPUs)";
}

}  // namespace zt::comm
