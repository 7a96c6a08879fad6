// comm's entry into the CUDA module (Note [The CUDA backend module] in core/device/cuda_module.h):
// the NCCL communicator, built into the module with the rest of the CUDA backend.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "comm/communicator_factory.h"
#include "comm/store/store.h"
#include "core/device/cuda_module.h"

namespace zt::comm {

struct NcclEntries {
  // Null in a module built without NCCL.
  std::unique_ptr<Communicator> (*create)(Store& store, int rank, int world_size,
                                          const CommOptions& options) = nullptr;
  // Why libnccl.so.2 cannot be opened, or nullopt when it can (the module opens it then).
  std::optional<std::string> (*library_missing)() = nullptr;
};
CudaModuleSlot<NcclEntries>& nccl_entries();

}  // namespace zt::comm
