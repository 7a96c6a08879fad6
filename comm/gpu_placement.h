// Which GPU each rank of an NCCL group computes on, and the mistake NCCL reports only as
// "Duplicate GPU detected": two ranks of one group on one GPU (Gloo shares a GPU, NCCL
// cannot). Ranks publish their placement through the store before NCCL initializes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zt::comm {

struct GpuPlacement {
  std::string host;    // the machine, by hostname
  std::string gpu;     // the GPU's PCI bus id: the same whatever CUDA_VISIBLE_DEVICES calls it
  std::string device;  // how the rank names it ("cuda:0"), for messages

  friend bool operator==(const GpuPlacement&, const GpuPlacement&) = default;
};

// "<host> <gpu> <device>" as a rank publishes it, and back (nullopt for other text).
std::string placement_text(const GpuPlacement& placement);
std::optional<GpuPlacement> parse_placement(const std::string& text);

// When `rank` shares its GPU with other ranks of `placements` (indexed by rank), the
// message naming them and saying what to do (one GPU per rank, or comm.backend = "gloo");
// nullopt when its GPU is its own.
std::optional<std::string> shared_gpu_problem(const std::vector<GpuPlacement>& placements,
                                              int rank);

}  // namespace zt::comm
