// Which device a rank trains on (runtime.device, runtime.device_index or LOCAL_RANK), which
// collectives library moves its tensors (comm.backend) and which kernels run its attention
// (runtime.attention), checked against each other and against this build before anything is
// allocated or connected.
#pragma once

#include <string>

#include "core/config/config.h"
#include "core/device.h"
#include "nn/kernels/kernel_backend.h"

namespace zt::engine {

// Throws ConfigError naming precision.dtype for fp16 on CUDA, which has no CUDA kernels: what
// rank_device refuses, for the estimator too, which opens no device.
void check_precision_on_device(const Config& config);

// cpu:<local_rank> for the CPU (the index only names the rank's slice); for CUDA the GPU
// runtime.device_index names, or LOCAL_RANK's when it is -1. Whether that GPU exists is
// checked where the device is opened (make_device_context), which knows how many there are.
// Throws ConfigError naming precision.dtype for fp16 on CUDA, which has no CUDA kernels.
Device rank_device(const Config& config, int local_rank);

// runtime.attention with auto resolved (to rows: Note [Attention default] in
// device_selection.cpp). Throws ConfigError naming runtime.attention for cudnn on the CPU, with
// precision.dtype = "fp32" (cuDNN's flash attention has no fp32 path), or in a build without
// the cuDNN attention (saying what the build was missing).
nn::CudaAttention resolved_attention(const Config& config);

// What runs the rank's attention, for memory.json: "cpu", "rows", or "cudnn (cuDNN 9.19.0 at
// build, 9.14.0 at run time)". The config must have passed resolved_attention.
std::string attention_description(const Config& config);

// comm.backend with auto resolved: NCCL on CUDA, Gloo on the CPU. Throws ConfigError naming
// both keys for NCCL on the CPU, and for NCCL in a build without it.
CommBackendKind resolved_comm_backend(const Config& config);

}  // namespace zt::engine
