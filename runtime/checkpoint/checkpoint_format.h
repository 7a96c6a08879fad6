// The on-disk format of a sharded checkpoint (Note [Checkpoint format] in
// docs/ARCHITECTURE.md):
//
//   <checkpoint.dir>/step-<N>/              visible only once complete (renamed from .tmp)
//     manifest.toml                         written last: what the checkpoint holds
//     rank-<K>-of-<W>.zts                   one per rank of the saving run
//
// A rank file is a RankFileHeader, its runs (StateRun: begin, count, shard_offset, each an
// int64), then every state tensor of the rank's shard (fp32 masters first, then the
// optimizer's states) as shard_numel little-endian floats, padding included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/flat_layout.h"
#include "sharding/state_shard.h"

namespace zt::checkpoint {

inline constexpr std::string_view kFormat = "zerotrain-checkpoint/1";
inline constexpr std::string_view kManifestName = "manifest.toml";
inline constexpr std::string_view kStepPrefix = "step-";
inline constexpr std::string_view kPartialSuffix = ".tmp";
// A checkpoint being replaced by a newer save of the same step, on a filesystem that cannot
// exchange two directories atomically.
inline constexpr std::string_view kReplacedSuffix = ".replaced";

// "rank-00001-of-00004.zts"
std::string rank_file_name(int rank, int world_size);
// "step-00000120"
std::string step_directory_name(std::int64_t step);

struct RankFileHeader {
  char magic[8] = {'Z', 'T', 'C', 'K', 'P', 'T', '0', '1'};
  std::uint32_t version = 1;
  std::uint32_t rank = 0;
  std::uint32_t world_size = 0;
  std::uint32_t tensors = 0;  // 1 (masters) + optimizer states
  std::int64_t step = 0;
  std::int64_t shard_numel = 0;
  std::int64_t run_count = 0;
  std::int64_t reserved[2] = {0, 0};
};
static_assert(sizeof(RankFileHeader) == 64);

// Where tensor `tensor`'s shard starts in a rank file with `run_count` runs.
std::uint64_t tensor_data_offset(std::int64_t run_count, std::int64_t shard_numel, int tensor);
std::uint64_t rank_file_bytes(std::int64_t run_count, std::int64_t shard_numel, int tensors);

struct ManifestParameter {
  std::string name;  // "<block>.<parameter>": "block.0.attn.qkv.weight"
  std::vector<std::int64_t> shape;
  std::int64_t offset = 0;  // first element in the model's unpadded order
  std::string tied_to;      // a tied parameter: the name of the one whose values it uses

  std::int64_t numel() const;
  std::string shape_text() const;  // "(192, 64)"
  friend bool operator==(const ManifestParameter&, const ManifestParameter&) = default;
};

struct ManifestFile {
  std::string name;
  int rank = 0;
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
};

// What the trainer needs besides the model states to continue exactly where it stopped.
// The data position is the step: batch s is the same samples at every world size.
struct TrainerState {
  std::int64_t step = 0;           // optimizer steps taken (the next one is step + 1)
  std::int64_t applied_steps = 0;  // updates made (fp16 skips excluded): Adam's step count
  std::optional<double> loss_scale;
  std::int64_t loss_scale_clean_steps = 0;
};

struct Manifest {
  TrainerState trainer;
  int world_size = 1;
  int zero_stage = 0;
  std::string precision;                 // precision.dtype of the saving run
  std::string optimizer;                 // optimizer.type
  std::vector<std::string> state_names;  // "master", then the optimizer's states
  std::int64_t numel = 0;                // real parameters
  std::int64_t global_batch_size = 0;
  std::int64_t seed = 0;
  std::string run_id;   // the saving run's id; "" in a manifest written before run ids
  std::string offload;  // offload.optimizer of the saving run (informational)
  std::vector<ManifestParameter> parameters;
  std::vector<ManifestFile> files;  // by rank
  std::string config_toml;          // the saving run's effective config
};

// The model's parameters as a manifest lists them, in the flat layout's order.
std::vector<ManifestParameter> describe_parameters(const zero::FlatLayout& layout);
// The optimizer's state names for `optimizer_type` ("adamw") with `states` states.
std::vector<std::string> state_names(std::string_view optimizer_type, int states);

std::string manifest_to_toml(const Manifest& manifest);
// Throws Error naming `path` and the key when the text is not a manifest of this format.
Manifest parse_manifest(std::string_view text, const std::string& path);
// The run_id of a manifest's text; "" when it has none or the text is not valid TOML.
std::string manifest_run_id(std::string_view text);

}  // namespace zt::checkpoint
