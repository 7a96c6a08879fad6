// The typed configuration every run is described by. One struct per TOML
// section; the schema in config_schema.cpp gives each field its key, default, unit, range
// and documentation. Nothing downstream of loading ever sees a TOML node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/device.h"

namespace zt {

enum class ModelType { kMlp, kGpt, kLlama };
// The decoder-only language models (GPT, Llama): token windows in, next-token logits out.
constexpr bool is_language_model(ModelType type) {
  return type == ModelType::kGpt || type == ModelType::kLlama;
}
enum class DataFormat { kAuto, kZerotrain, kLlmc, kNanogpt };
enum class OptimizerType { kSgd, kAdam, kAdamW };
enum class SchedulerType { kConstant, kWarmup, kWarmupCosine, kWarmupLinear };
enum class PrecisionDType { kFp32, kBf16, kFp16 };
// Standing gradients: auto (bf16 compute: bf16; fp16: fp32), the compute dtype, or fp32.
enum class GradDType { kAuto, kCompute, kFp32 };
// Which collectives library moves the tensors; kAuto: NCCL on CUDA, Gloo on the CPU.
enum class CommBackendKind { kAuto, kGloo, kNccl };
enum class CollectiveCheckKind { kOff, kStep, kEvery };
// The CUDA attention kernels (runtime.attention): auto (today: rows), the batched GEMMs and
// row kernels (rows), or cuDNN's fused flash attention (cudnn, bf16 only).
enum class AttentionKind { kAuto, kRows, kCudnn };
// Where offloaded model states live: on the device (none), in host memory, or on NVMe.
enum class OffloadTarget { kNone, kCpu, kNvme };

struct RunConfig {
  std::string dir;             // where metrics.jsonl and config.toml go ("" = runs/<model.type>)
  bool overwrite = false;      // replace the outputs a previous run left in dir
  std::int64_t seed = 0;       // seeds initialization and synthetic data
  std::int64_t log_every = 0;  // steps between progress lines

  friend bool operator==(const RunConfig&, const RunConfig&) = default;
};

struct ModelConfig {
  ModelType type = ModelType::kMlp;
  // MLP: input_dim -> hidden_dim -> num_classes with ReLU, softmax cross-entropy loss.
  std::int64_t input_dim = 0;
  std::int64_t hidden_dim = 0;
  std::int64_t num_classes = 0;
  // GPT and Llama: a pre-norm decoder-only transformer over tokens.
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t d_model = 0;
  std::int64_t vocab_size = 0;
  // The data's vocabulary when vocab_size pads past it (0: vocab_size, or what the runtime
  // resolves it to; Note [Padded vocabulary] in nn/kernels/math/cross_entropy_math.h).
  std::int64_t data_vocab_size = 0;
  std::int64_t seq_len = 0;  // tokens per sample (the context length)
  bool tie_embeddings = false;
  // GPT and Llama: inverted dropout's probability in training (0 = none); Note [Dropout
  // sites] in nn/models/decoder_blocks.h.
  double dropout = 0;
  // Llama only: key/value heads (0 = n_head), the SwiGLU width (0 = Llama's default from
  // d_model), the rotary embeddings' base and RMSNorm's epsilon.
  std::int64_t n_kv_head = 0;
  std::int64_t ffn_dim = 0;
  double rope_theta = 0;
  double norm_eps = 0;

  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

struct DataConfig {
  // Token files, one path or glob pattern per line (a TOML array of strings is held joined
  // by '\n'; see data_path_entries); empty selects the built-in synthetic data.
  std::string path;
  DataFormat format = DataFormat::kAuto;  // how the token files are laid out
  std::string tokenizer;            // BPE tokenizer file the token files were made with; "" = bytes
  double synthetic_peakedness = 0;  // GPT synthetic corpus: higher = lower entropy
  // Validation token files, held like path; empty: none (see val_fraction).
  std::string val_path;
  // The fraction of each training file's tokens (its last ones) held out for validation.
  double val_fraction = 0;

  friend bool operator==(const DataConfig&, const DataConfig&) = default;
};

// The entries of a string-list value (paths or glob patterns), in order; none when empty.
inline std::vector<std::string> path_entries(const std::string& joined) {
  std::vector<std::string> entries;
  std::size_t begin = 0;
  while (begin < joined.size()) {
    const std::size_t end = std::min(joined.find('\n', begin), joined.size());
    entries.push_back(joined.substr(begin, end - begin));
    begin = end + 1;
  }
  return entries;
}

// The entries of data.path, in order; none when it is empty.
inline std::vector<std::string> data_path_entries(const DataConfig& data) {
  return path_entries(data.path);
}

struct TrainConfig {
  std::int64_t steps = 0;
  std::int64_t micro_batch_size = 0;   // samples per rank per micro-batch
  std::int64_t grad_accum_steps = 0;   // micro-batches per optimizer step
  std::int64_t global_batch_size = 0;  // 0 = micro_batch_size * grad_accum_steps * world_size
  std::int64_t eval_every = 0;         // steps between validation losses (and the last); 0 = never
  std::int64_t eval_windows = 0;       // validation samples over all ranks per evaluation
  std::int64_t sample_every = 0;       // steps between text samples (and the last); 0 = never
  std::int64_t sample_tokens = 0;      // tokens generated per sample

  friend bool operator==(const TrainConfig&, const TrainConfig&) = default;
};

struct OptimizerConfig {
  OptimizerType type = OptimizerType::kAdamW;
  double lr = 0;
  double momentum = 0;       // SGD
  bool nesterov = false;     // SGD
  double beta1 = 0;          // Adam, AdamW
  double beta2 = 0;          // Adam, AdamW
  double eps = 0;            // Adam, AdamW
  double weight_decay = 0;   // AdamW: decoupled; Adam and SGD: added to the gradient
  double max_grad_norm = 0;  // clip the global gradient norm to this; 0 = no clipping

  friend bool operator==(const OptimizerConfig&, const OptimizerConfig&) = default;
};

struct SchedulerConfig {
  SchedulerType type = SchedulerType::kConstant;
  std::int64_t warmup_steps = 0;  // linear ramp from 0 to optimizer.lr
  double min_lr_ratio = 0;        // decay floor, as a fraction of optimizer.lr

  friend bool operator==(const SchedulerConfig&, const SchedulerConfig&) = default;
};

struct PrecisionConfig {
  PrecisionDType dtype = PrecisionDType::kFp32;
  GradDType grad_dtype = GradDType::kAuto;
  // fp16 dynamic loss scaling.
  double initial_loss_scale = 0;
  std::int64_t loss_scale_growth_interval = 0;
  double loss_scale_backoff = 0;
  double min_loss_scale = 0;

  friend bool operator==(const PrecisionConfig&, const PrecisionConfig&) = default;
};

// The integers of a quantized collective (qgZ's wire format).
enum class QuantizedFormat { kInt4, kInt8 };

struct ZeroConfig {
  std::int64_t stage = 0;                     // 0 = DDP, 1, 2, 3
  std::int64_t reduce_bucket_size_bytes = 0;  // gradient bucket for all-reduce / reduce-scatter
  std::int64_t prefetch_blocks = 0;           // stage 3: blocks gathered ahead of compute
  std::int64_t param_persistence_threshold_bytes = 0;  // stage 3: smaller blocks stay gathered
  std::int64_t max_live_parameters_bytes = 0;          // stage 3: cap on gathered parameter bytes
  std::int64_t shard_group_size = 0;    // stages 1-3: ranks a shard spans; 0 = the world
  std::int64_t hpz_partition_size = 0;  // stage 3: ranks a secondary shard spans; 0, 1 = none
  bool quantized_weights = false;       // stage 3: int8 parameter all-gathers (ZeRO++ qwZ)
  std::int64_t quantization_block = 0;  // elements per quantization block (one f32 scale each)
  bool quantized_gradients = false;     // stages 2-3: low-bit hierarchical reduce (ZeRO++ qgZ)
  QuantizedFormat quantized_gradients_format = QuantizedFormat::kInt4;
  bool quantized_gradients_error_feedback = false;  // qgZ: each rank's rounding error carried

  friend bool operator==(const ZeroConfig&, const ZeroConfig&) = default;
};

struct OffloadConfig {
  OffloadTarget optimizer = OffloadTarget::kNone;  // fp32 masters and optimizer states
  OffloadTarget params = OffloadTarget::kNone;     // stage 3 parameter shards
  std::int64_t sub_group_size = 0;                 // elements the CPU optimizer updates per task
  std::int64_t cpu_threads = 0;                    // CPU optimizer threads; 0 = cores / local ranks
  std::string nvme_path;      // offload.optimizer = "nvme": directory of state files
  bool overlap_step = false;  // the step of iteration t overlaps the forward of t+1

  friend bool operator==(const OffloadConfig&, const OffloadConfig&) = default;
};

struct RuntimeConfig {
  DeviceKind device = DeviceKind::kCpu;
  std::int64_t device_index = -1;                  // GPU ordinal; -1 = LOCAL_RANK
  std::int64_t device_memory_limit_bytes = 0;      // 0 = no limit
  std::int64_t blas_threads = 0;                   // 0 = cores / local ranks
  double comm_timeout_s = 0;                       // bound on every collective and store wait
  bool memory_profile = false;                     // record every rank's memory timeline
  std::int64_t memory_profile_steps = 2;           // steps the timeline covers (after init)
  AttentionKind attention = AttentionKind::kAuto;  // the CUDA attention kernels

  friend bool operator==(const RuntimeConfig&, const RuntimeConfig&) = default;
};

struct CommConfig {
  CommBackendKind backend = CommBackendKind::kAuto;
  bool dump_on_exit = false;  // every rank writes its flight record as it leaves
  CollectiveCheckKind check_collectives = CollectiveCheckKind::kOff;  // ranks compare their ops

  friend bool operator==(const CommConfig&, const CommConfig&) = default;
};

struct ActivationCheckpointingConfig {
  bool enabled = false;
  std::int64_t every_n_blocks = 0;  // checkpoint blocks whose index is a multiple of this

  friend bool operator==(const ActivationCheckpointingConfig&,
                         const ActivationCheckpointingConfig&) = default;
};

struct CheckpointConfig {
  std::string dir;               // "" = <run.dir>/checkpoints
  std::int64_t every_steps = 0;  // save after every this many steps and after the last; 0 = never
  std::int64_t keep_last = 0;    // complete checkpoints kept (oldest removed first); 0 = all
  std::string resume;            // "" = start fresh, "latest" = newest complete in dir, or a path
  std::string init_from;         // Hugging Face safetensors weights to start from ("" = none)

  friend bool operator==(const CheckpointConfig&, const CheckpointConfig&) = default;
};

// Where each key that was given got its value ("file:line:column" or "--set key=value"),
// so a check made after loading names the place the user must edit. Not part of the
// configuration's value: two configs that differ only here compare equal.
class KeyOrigins {
 public:
  void set(std::string key, std::string where);
  const std::string* find(std::string_view key) const;
  friend bool operator==(const KeyOrigins&, const KeyOrigins&) { return true; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;  // key "section.name", where
};

struct Config {
  RunConfig run;
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  PrecisionConfig precision;
  ZeroConfig zero;
  OffloadConfig offload;
  RuntimeConfig runtime;
  CommConfig comm;
  ActivationCheckpointingConfig activation_checkpointing;
  CheckpointConfig checkpoint;
  std::string source;  // the file (or "<defaults>") the config came from, for messages
  KeyOrigins origins;

  friend bool operator==(const Config&, const Config&) = default;
};

// Where `key` ("model.vocab_size") got its value, to start a message with: its
// "file:line:column" or "--set key=value" when given, else the config's source.
std::string where_set(const Config& config, std::string_view key);

}  // namespace zt
