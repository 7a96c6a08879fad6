// Chooses the communicator for a backend, a device and a world size: Gloo (the trivial one
// for a single rank) or NCCL, and refuses the combinations that cannot work.
#include "comm/communicator_factory.h"

#include <string>

#include "comm/checked_communicator.h"
#include "comm/gloo/gloo_communicator.h"
#include "comm/gloo/single_rank_communicator.h"
#include "comm/nccl_entries.h"
#include "core/error.h"

namespace zt::comm {
namespace {

void check_rank(int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw CommError("cannot create a communicator for rank " + std::to_string(rank) + " of " +
                    std::to_string(world_size) + ": the rank must be in [0, world size)");
  }
}

std::unique_ptr<Communicator> create_nccl_communicator(Store& store, int rank, int world_size,
                                                       const CommOptions& options) {
  if (!nccl_backend_built()) {
    throw ConfigError(
        "comm.backend = \"nccl\": this zerotrain was built without NCCL (configure with the "
        "CUDA toolkit and NCCL installed), so it can only use comm.backend = \"gloo\"");
  }
  if (options.device == nullptr || options.device->device().kind != DeviceKind::kCuda) {
    const std::string device =
        options.device == nullptr ? "no device" : options.device->device().to_string();
    throw ConfigError("comm.backend = \"nccl\" moves CUDA tensors only, but the rank runs on " +
                      device + ": set runtime.device = \"cuda\", or comm.backend = \"gloo\"");
  }
  const NcclEntries& entries = nccl_entries().get();
  ZT_CHECK(entries.create != nullptr, "the CUDA module was built without the NCCL communicator");
  return entries.create(store, rank, world_size, options);
}

}  // namespace

CudaModuleSlot<NcclEntries>& nccl_entries() {
  static CudaModuleSlot<NcclEntries> slot;
  return slot;
}

std::string_view comm_backend_name(CommBackend backend) {
  switch (backend) {
    case CommBackend::kGloo:
      return "gloo";
    case CommBackend::kNccl:
      return "nccl";
  }
  return "unknown";
}

bool nccl_backend_built() {
#if defined(ZT_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

std::optional<std::string> nccl_library_problem() {
  if (!nccl_backend_built()) return "this zerotrain was built without NCCL";
  const NcclEntries& entries = nccl_entries().get();
  ZT_CHECK(entries.library_missing != nullptr, "the CUDA module was built without NCCL");
  return entries.library_missing();
}

std::unique_ptr<Communicator> create_communicator(Store& store, int rank, int world_size,
                                                  const CommOptions& options) {
  check_rank(rank, world_size);
  std::unique_ptr<Communicator> comm;
  if (options.backend == CommBackend::kNccl) {
    comm = create_nccl_communicator(store, rank, world_size, options);
  } else if (world_size == 1) {
    comm = std::make_unique<SingleRankCommunicator>(options);
  } else {
    comm = std::make_unique<GlooCommunicator>(store, rank, world_size, options);
  }
  // One rank has nobody to disagree with.
  if (world_size > 1 && options.collective_check != nullptr &&
      options.collective_check->mode() != CollectiveCheckMode::kOff) {
    comm = std::make_unique<CheckedCommunicator>(std::move(comm), options.collective_check,
                                                 options.group_name);
  }
  if (options.op_skip_fault != nullptr) {
    comm = std::make_unique<SkippingCommunicator>(std::move(comm), options.op_skip_fault,
                                                  options.group_name);
  }
  return comm;
}

std::unique_ptr<Communicator> create_cpu_communicator(Store& store, int rank, int world_size,
                                                      const CommOptions& options) {
  ZT_CHECK(options.backend == CommBackend::kGloo,
           "create_cpu_communicator asked for comm.backend = \"" +
               std::string(comm_backend_name(options.backend)) + "\"");
  return create_communicator(store, rank, world_size, options);
}

}  // namespace zt::comm
