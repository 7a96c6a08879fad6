// Which device a rank trains on (runtime.device, runtime.device_index or LOCAL_RANK), which
// collectives library moves its tensors (comm.backend) and which kernels run its attention
// (runtime.attention), checked against each other and against this build before anything is
// allocated or connected.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/device.h"
#include "nn/kernels/attention_heads.h"
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

// Whether a run drops its attention probabilities: a language model with model.dropout > 0
// (Note [Dropout keeps the project's attention] in device_selection.cpp).
bool drops_attention_probabilities(const Config& config);

// runtime.attention with auto resolved (to rows: Note [Attention default] in
// device_selection.cpp). Throws ConfigError naming runtime.attention for cudnn on the CPU, with
// precision.dtype = "fp32" (cuDNN's flash attention has no fp32 path), in a build without
// the cuDNN attention (saying what the build was missing), or with model.dropout > 0 (naming
// both keys: cuDNN cannot draw the dropout masks).
nn::CudaAttention resolved_attention(const Config& config);

// What cuDNN says of the run's attention graphs: nullopt when it built them, else why not
// (nn::cudnn_attention_refusal over training_attention_shape, or a test's stand-in).
using CudnnAttentionCheck = std::function<std::optional<std::string>()>;

// What runtime.attention = "auto" means: the rows kernels, or cuDNN where its check passes for
// bf16 on CUDA. kAutoAttention is this zerotrain's (Note [Attention default]).
enum class AutoAttention { kRows, kCudnnWhenChecked };
inline constexpr AutoAttention kAutoAttention = AutoAttention::kRows;

struct AttentionChoice {
  nn::CudaAttention attention = nn::CudaAttention::kRows;
  std::optional<std::string> warning;  // why auto runs rows where it would have run cuDNN
};

// The attention kernels of a run, decided before step 1 (Note [cuDNN attention never ends a
// run] in nn/kernels/cuda/cudnn/cudnn_attention.h): resolved_attention, then for cuDNN its
// check of the run's graphs. runtime.attention = "cudnn" that cuDNN refuses throws ConfigError
// naming runtime.attention with cuDNN's reason; "auto" (under kCudnnWhenChecked) that it
// refuses runs rows with a warning saying why. `check` is called at most once, and only where
// cuDNN could run: on CUDA, for a language model in bf16.
AttentionChoice checked_attention(const Config& config, const CudnnAttentionCheck& check,
                                  AutoAttention auto_attention = kAutoAttention);

// The attention call of a training step: micro_batch_size rows of seq_len positions, with
// the model's heads.
nn::AttentionShape training_attention_shape(const Config& config);

// What runs the rank's attention, for memory.json: "cpu", "rows", or "cudnn (cuDNN 9.19.0 at
// build, 9.14.0 at run time)". The config must have passed resolved_attention.
std::string attention_description(const Config& config);

// comm.backend with auto resolved: NCCL on CUDA, Gloo on the CPU. Throws ConfigError naming
// both keys for NCCL on the CPU, and for NCCL in a build without it.
CommBackendKind resolved_comm_backend(const Config& config);

// Why NCCL cannot run here (comm::nccl_library_problem, or a test's stand-in); nullopt if it can.
using NcclLibraryCheck = std::function<std::optional<std::string>()>;

struct CommChoice {
  CommBackendKind backend = CommBackendKind::kGloo;
  std::optional<std::string> warning;  // why auto moves tensors with Gloo on CUDA
};

// resolved_comm_backend, then, where it is NCCL, whether libnccl.so.2 opens (`check`, called
// only then): "auto" falls back to Gloo with a warning saying why; "nccl" throws ConfigError
// naming comm.backend and the library.
CommChoice available_comm_backend(const Config& config, const NcclLibraryCheck& check);

}  // namespace zt::engine
