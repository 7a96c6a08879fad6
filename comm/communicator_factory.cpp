// Chooses the CPU communicator for a world size: the trivial one for a single rank, Gloo else.
#include "comm/communicator_factory.h"

#include <string>

#include "comm/gloo/gloo_communicator.h"
#include "comm/gloo/single_rank_communicator.h"
#include "core/error.h"

namespace zt::comm {

std::unique_ptr<Communicator> create_cpu_communicator(Store& store, int rank, int world_size,
                                                      const CommOptions& options) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw CommError("cannot create a communicator for rank " + std::to_string(rank) + " of " +
                    std::to_string(world_size) + ": the rank must be in [0, world size)");
  }
  if (world_size == 1) return std::make_unique<SingleRankCommunicator>(options.timeout);
  return std::make_unique<GlooCommunicator>(store, rank, world_size, options);
}

}  // namespace zt::comm
