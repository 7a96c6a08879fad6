// The rank's device, collectives backend and attention kernels, from the config.
#include "runtime/engine/device_selection.h"

#include <string>

#include "comm/communicator_factory.h"
#include "core/config/config_enums.h"
#include "core/error.h"

namespace zt::engine {

void check_precision_on_device(const Config& config) {
  if (config.runtime.device == DeviceKind::kCuda &&
      config.precision.dtype == PrecisionDType::kFp16) {
    throw ConfigError(where_set(config, "precision.dtype") +
                      ": precision.dtype = \"fp16\" has no CUDA kernels in this zerotrain; "
                      "on runtime.device = \"cuda\" use precision.dtype = \"bf16\" or "
                      "\"fp32\" (fp16 runs on the CPU)");
  }
}

Device rank_device(const Config& config, int local_rank) {
  check_precision_on_device(config);
  if (config.runtime.device == DeviceKind::kCpu) return Device::cpu(local_rank);
  const auto index =
      config.runtime.device_index >= 0 ? static_cast<int>(config.runtime.device_index) : local_rank;
  return Device::cuda(index);
}

// Note [Attention default]
// runtime.attention = "auto" runs the rows kernels until cuDNN's flash attention has passed
// the GPU check (scripts/gpu-check tests: CudnnAttention.* and the cudnn training test);
// then auto becomes cudnn for bf16 on CUDA, and rows stays selectable.
nn::CudaAttention resolved_attention(const Config& config) {
  if (config.runtime.attention != AttentionKind::kCudnn) return nn::CudaAttention::kRows;
  const std::string where =
      where_set(config, "runtime.attention") + ": runtime.attention = \"cudnn\"";
  if (config.runtime.device != DeviceKind::kCuda) {
    throw ConfigError(where + " runs on the GPU, but runtime.device = \"" +
                      std::string(config_name(config.runtime.device)) +
                      "\"; set runtime.device = \"cuda\" or runtime.attention = \"auto\"");
  }
  if (config.precision.dtype == PrecisionDType::kFp32) {
    throw ConfigError(where +
                      " needs bf16 (cuDNN's flash attention has no fp32 path), but "
                      "precision.dtype = \"fp32\"; set precision.dtype = \"bf16\" or "
                      "runtime.attention = \"rows\"");
  }
  if (!nn::cudnn_attention_built()) {
    throw ConfigError(where + ": this zerotrain was built without the cuDNN attention (" +
                      nn::cudnn_attention_missing() + "); use runtime.attention = \"rows\"");
  }
  return nn::CudaAttention::kCudnn;
}

std::string attention_description(const Config& config) {
  if (config.runtime.device == DeviceKind::kCpu) return "cpu";
  if (resolved_attention(config) == nn::CudaAttention::kRows) return "rows";
  return "cudnn (" + nn::cudnn_versions() + ")";
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
