// Which device a rank trains on (runtime.device, runtime.device_index or LOCAL_RANK) and
// which collectives library moves its tensors (comm.backend), checked against each other
// and against this build before anything is allocated or connected.
#pragma once

#include "core/config/config.h"
#include "core/device.h"

namespace zt::engine {

// cpu:<local_rank> for the CPU (the index only names the rank's slice); for CUDA the GPU
// runtime.device_index names, or LOCAL_RANK's when it is -1. Whether that GPU exists is
// checked where the device is opened (make_device_context), which knows how many there are.
// Throws ConfigError naming precision.dtype for fp16 on CUDA, which has no CUDA kernels.
Device rank_device(const Config& config, int local_rank);

// comm.backend with auto resolved: NCCL on CUDA, Gloo on the CPU. Throws ConfigError naming
// both keys for NCCL on the CPU, and for NCCL in a build without it.
CommBackendKind resolved_comm_backend(const Config& config);

}  // namespace zt::engine
