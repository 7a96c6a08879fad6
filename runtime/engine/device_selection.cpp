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
// runtime.attention = "auto" runs the rows kernels (kAutoAttention = kRows) until cuDNN's flash
// attention has passed the GPU check (scripts/gpu-check tests: CudnnAttention.*,
// CudnnAttentionCheck.* and the cudnn training test): its kernels have compiled but never run
// on a GPU, and a default should not be the first run of a kernel. Then kAutoAttention becomes
// kCudnnWhenChecked: cuDNN for bf16 on CUDA where checked_attention's pre-check builds the run's
// graphs, else rows with one warning saying why; rows stays selectable. The pre-check and the
// fallback already run today for runtime.attention = "cudnn" (refused at start with cuDNN's
// reason) and are tested for both meanings of auto.
// Note [Dropout keeps the project's attention]
// model.dropout > 0 drops the attention probabilities with the project's hash masks (Note
// [Attention dropout] in nn/kernels/math/attention_dropout_math.h), which cuDNN's dropout (its
// own Philox generator) cannot draw: every ZeRO stage, world size and micro-batch split would
// no longer see the same masks. So runtime.attention = "cudnn" with dropout is refused, and
// "auto" runs the project's attention (rows on CUDA) without asking cuDNN.
bool drops_attention_probabilities(const Config& config) {
  return is_language_model(config.model.type) && config.model.dropout > 0.0;
}

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
  if (drops_attention_probabilities(config)) {
    // Note [Dropout keeps the project's attention]
    throw ConfigError(where +
                      " cannot drop the attention probabilities with zerotrain's dropout masks "
                      "(cuDNN draws its own), but model.dropout = " +
                      std::to_string(config.model.dropout) + " (" +
                      where_set(config, "model.dropout") +
                      "); set runtime.attention = \"rows\" (or \"auto\"), or model.dropout = 0");
  }
  if (!nn::cudnn_attention_built()) {
    throw ConfigError(where + ": this zerotrain was built without the cuDNN attention (" +
                      nn::cudnn_attention_missing() + "); use runtime.attention = \"rows\"");
  }
  return nn::CudaAttention::kCudnn;
}

nn::AttentionShape training_attention_shape(const Config& config) {
  const ModelConfig& model = config.model;
  const std::int64_t n_kv_head = model.n_kv_head > 0 ? model.n_kv_head : model.n_head;
  return {config.train.micro_batch_size,
          model.seq_len,
          model.n_head,
          n_kv_head,
          model.n_head > 0 ? model.d_model / model.n_head : 0,
          model.seq_len};
}

AttentionChoice checked_attention(const Config& config, const CudnnAttentionCheck& check,
                                  AutoAttention auto_attention) {
  const nn::CudaAttention resolved = resolved_attention(config);
  const bool explicit_cudnn = resolved == nn::CudaAttention::kCudnn;
  const bool auto_may_use_cudnn = config.runtime.attention == AttentionKind::kAuto &&
                                  auto_attention == AutoAttention::kCudnnWhenChecked &&
                                  config.runtime.device == DeviceKind::kCuda &&
                                  config.precision.dtype == PrecisionDType::kBf16;
  // Only a language model has attention for cuDNN to run.
  if (!is_language_model(config.model.type) || (!explicit_cudnn && !auto_may_use_cudnn)) {
    return {nn::CudaAttention::kRows, std::nullopt};
  }
  // Note [Dropout keeps the project's attention] (explicit cudnn threw above)
  if (drops_attention_probabilities(config)) {
    return {nn::CudaAttention::kRows,
            "runtime.attention = \"auto\" runs the rows attention: model.dropout = " +
                std::to_string(config.model.dropout) +
                " drops the attention probabilities with masks cuDNN cannot draw"};
  }
  const std::optional<std::string> refused = check();
  if (!refused) return {nn::CudaAttention::kCudnn, std::nullopt};
  if (explicit_cudnn) {
    throw ConfigError(where_set(config, "runtime.attention") +
                      ": runtime.attention = \"cudnn\", but cuDNN cannot run this run's "
                      "attention: " +
                      *refused + "; set runtime.attention = \"rows\" (or \"auto\")");
  }
  return {nn::CudaAttention::kRows,
          "runtime.attention = \"auto\" runs the rows attention: " + *refused};
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

CommChoice available_comm_backend(const Config& config, const NcclLibraryCheck& check) {
  const CommBackendKind backend = resolved_comm_backend(config);
  if (backend != CommBackendKind::kNccl) return {backend, std::nullopt};
  const std::optional<std::string> problem = check();
  if (!problem) return {backend, std::nullopt};
  if (config.comm.backend == CommBackendKind::kAuto) {
    return {
        CommBackendKind::kGloo,
        "comm.backend = \"auto\" moves tensors with Gloo: NCCL cannot be used (" + *problem + ")"};
  }
  throw ConfigError(where_set(config, "comm.backend") +
                    ": comm.backend = \"nccl\" needs NCCL's libnccl.so.2, which cannot be used "
                    "here (" +
                    *problem + "): install NCCL 2 or set comm.backend = \"gloo\" (or \"auto\")");
}

}  // namespace zt::engine
