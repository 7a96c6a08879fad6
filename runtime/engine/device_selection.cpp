// The rank's device and collectives backend, from the config.
#include "runtime/engine/device_selection.h"

#include "comm/communicator_factory.h"
#include "core/config/config_enums.h"
#include "core/error.h"

namespace zt::engine {

Device rank_device(const Config& config, int local_rank) {
  if (config.runtime.device == DeviceKind::kCpu) return Device::cpu(local_rank);
  if (config.precision.dtype == PrecisionDType::kFp16) {
    throw ConfigError(where_set(config, "precision.dtype") +
                      ": precision.dtype = \"fp16\" has no CUDA kernels in this zerotrain; "
                      "on runtime.device = \"cuda\" use precision.dtype = \"bf16\" or "
                      "\"fp32\" (fp16 runs on the CPU)");
  }
  const auto index =
      config.runtime.device_index >= 0 ? static_cast<int>(config.runtime.device_index) : local_rank;
  return Device::cuda(index);
}

CommBackendKind resolved_comm_backend(const Config& config) {
  const bool cuda = config.runtime.device == DeviceKind::kCuda;
  CommBackendKind backend = config.comm.backend;
  if (backend == CommBackendKind::kAuto) {
    backend = cuda && comm::nccl_backend_built() ? CommBackendKind::kNccl : CommBackendKind::kGloo;
  }
  if (backend == CommBackendKind::kNccl && !cuda) {
    throw ConfigError(where_set(config, "comm.backend") +
                      ": comm.backend = \"nccl\" moves CUDA tensors, but runtime.device = \"" +
                      std::string(config_name(config.runtime.device)) +
                      "\"; use comm.backend = \"gloo\" (or \"auto\") on the CPU");
  }
  if (backend == CommBackendKind::kNccl && !comm::nccl_backend_built()) {
    throw ConfigError(where_set(config, "comm.backend") +
                      ": comm.backend = \"nccl\", but this zerotrain was built without NCCL "
                      "(install NCCL with the CUDA toolkit and rebuild), so only "
                      "comm.backend = \"gloo\" is available");
  }
  return backend;
}

}  // namespace zt::engine
