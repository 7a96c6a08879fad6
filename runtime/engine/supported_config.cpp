// The checks of check_supported: each refusal names the key and where it was set.
#include "runtime/engine/supported_config.h"

#include <string>

#include "core/config/config_enums.h"
#include "core/error.h"
#include "offload/nvme_state_file.h"
#include "runtime/checkpoint/checkpoint_directory.h"
#include "runtime/engine/device_selection.h"

namespace zt::engine {

void check_supported(const Config& config, bool check_files) {
  resolved_comm_backend(config);  // throws for a backend this device or build cannot use
  resolved_attention(config);     // likewise for attention kernels
  const OffloadConfig& offload = config.offload;
  if (offload.optimizer == OffloadTarget::kNvme && check_files) {
    // The directory is checked here, before run.dir gets any output; direct I/O and space
    // are checked when each rank creates its state file, still before training starts.
    if (auto problem = offload::nvme_directory_problem(offload.nvme_path)) {
      throw ConfigError(
          where_set(config, offload.nvme_path.empty() ? "offload.optimizer" : "offload.nvme_path") +
          ": " + *problem);
    }
  }
  if (offload.params == OffloadTarget::kCpu &&
      (config.zero.stage != 3 || offload.optimizer == OffloadTarget::kNone)) {
    throw ConfigError(where_set(config, "offload.params") +
                      ": offload.params = \"cpu\" keeps stage 3's parameter shard in host "
                      "memory as the offloaded optimizer's copy: it needs zero.stage = 3 (now " +
                      std::to_string(config.zero.stage) + ") and offload.optimizer = \"cpu\"");
  }
  if (offload.overlap_step &&
      (offload.optimizer != OffloadTarget::kCpu || offload.params != OffloadTarget::kNone)) {
    throw ConfigError(where_set(config, "offload.overlap_step") +
                      ": offload.overlap_step = true delays the host optimizer's update by one "
                      "step; it needs offload.optimizer = \"cpu\" (now \"" +
                      std::string(config_name(offload.optimizer)) +
                      "\") and offload.params = \"none\" (the update rewrites the host "
                      "parameters an offloaded shard would gather from)");
  }
  if (!offload.nvme_path.empty() && offload.optimizer != OffloadTarget::kNvme) {
    throw ConfigError(where_set(config, "offload.nvme_path") +
                      ": offload.nvme_path is set, but offload.optimizer is not \"nvme\"");
  }
  if (config.checkpoint.every_steps > 0 && check_files) {
    if (auto problem =
            checkpoint::checkpoint_directory_problem(checkpoint::checkpoint_directory(config))) {
      throw ConfigError(where_set(config, config.checkpoint.dir.empty() ? "checkpoint.every_steps"
                                                                        : "checkpoint.dir") +
                        ": checkpoint.dir " + *problem +
                        (config.checkpoint.dir.empty() ? " (empty checkpoint.dir means "
                                                         "<run.dir>/checkpoints)"
                                                       : "") +
                        "; set checkpoint.dir to a writable directory");
    }
  }
  if (offload.optimizer != OffloadTarget::kNone && config.zero.stage == 0) {
    throw ConfigError(where_set(config, "offload.optimizer") + ": offload.optimizer = \"" +
                      std::string(config_name(offload.optimizer)) +
                      "\" offloads this rank's optimizer shard, and zero.stage = 0 has none; "
                      "set zero.stage = 1, 2 or 3");
  }
}

void check_shard_group_size(const Config& config, int world_size) {
  const std::int64_t group = config.zero.shard_group_size;
  if (group == 0 || group == world_size) return;
  const std::string setting = where_set(config, "zero.shard_group_size") +
                              ": zero.shard_group_size = " + std::to_string(group);
  if (config.zero.stage == 0) {
    throw ConfigError(setting + " shards inside groups of " + std::to_string(group) +
                      " ranks, and zero.stage = 0 shards nothing (every rank of the " +
                      std::to_string(world_size) +
                      " holds every model state); set zero.stage = "
                      "1, 2 or 3, or zero.shard_group_size = 0");
  }
  if (world_size % group != 0) {
    throw ConfigError(setting + " does not divide the world size " + std::to_string(world_size) +
                      " (" + std::to_string(world_size) + " ranks would leave " +
                      std::to_string(world_size % group) +
                      " outside every group); set it to a divisor of " +
                      std::to_string(world_size) + ", or 0 for one group of all ranks");
  }
}

namespace {

// The shard group's size as the strategy resolves it: 0 or the world size is the world.
std::int64_t shard_group_of(const Config& config, int world_size) {
  const std::int64_t group = config.zero.shard_group_size;
  return group == 0 ? world_size : group;
}

bool hpz_enabled(const Config& config) { return config.zero.hpz_partition_size > 1; }

}  // namespace

void check_hpz_partition_size(const Config& config, int world_size) {
  if (!hpz_enabled(config)) return;
  const std::int64_t partition = config.zero.hpz_partition_size;
  const std::string setting = where_set(config, "zero.hpz_partition_size") +
                              ": zero.hpz_partition_size = " + std::to_string(partition);
  if (config.zero.stage != 3) {
    throw ConfigError(setting + " keeps a secondary copy of stage 3's parameter shards, and " +
                      "zero.stage = " + std::to_string(config.zero.stage) +
                      " keeps every parameter on every rank; set zero.stage = 3, or "
                      "zero.hpz_partition_size = 0");
  }
  const std::int64_t group = shard_group_of(config, world_size);
  const std::string group_text = config.zero.shard_group_size == 0 || group == world_size
                                     ? "the world size " + std::to_string(world_size)
                                     : "zero.shard_group_size = " + std::to_string(group);
  if (partition > group || group % partition != 0) {
    throw ConfigError(setting + " does not divide " + group_text +
                      " (a secondary shard re-cuts the shard group's parameters over groups of " +
                      std::to_string(partition) + " ranks inside it); set it to a divisor of " +
                      std::to_string(group) + ", e.g. the ranks per node, or 0 for none");
  }
}

void check_quantized_weights(const Config& config) {
  if (!config.zero.quantized_weights || config.zero.stage == 3) return;
  throw ConfigError(where_set(config, "zero.quantized_weights") +
                    ": zero.quantized_weights = true quantizes stage 3's parameter all-gathers, "
                    "and zero.stage = " +
                    std::to_string(config.zero.stage) +
                    " keeps every parameter on every rank, gathered exactly after each update; "
                    "set zero.stage = 3, or zero.quantized_weights = false");
}

void check_quantized_gradients(const Config& config) {
  const ZeroConfig& zero = config.zero;
  if (!zero.quantized_gradients) {
    if (!zero.quantized_gradients_error_feedback) return;
    throw ConfigError(where_set(config, "zero.quantized_gradients_error_feedback") +
                      ": zero.quantized_gradients_error_feedback = true carries the rounding "
                      "error of quantized gradients, and zero.quantized_gradients is false; set "
                      "zero.quantized_gradients = true, or drop the error feedback");
  }
  if (zero.stage == 2 || zero.stage == 3) return;
  throw ConfigError(where_set(config, "zero.quantized_gradients") +
                    ": zero.quantized_gradients = true quantizes the per-block gradient "
                    "reduce-scatter of stages 2 and 3, and zero.stage = " +
                    std::to_string(zero.stage) +
                    (zero.stage == 0 ? " all-reduces full gradients"
                                     : " reduces full gradients in place once a step") +
                    "; set zero.stage = 2 or 3, or zero.quantized_gradients = false");
}

void check_groups_fit_nodes(const Config& config, const comm::Topology& topology) {
  if (topology.equal_nodes()) return;
  const int world_size = topology.world_size();
  const bool hybrid = config.zero.stage > 0 && shard_group_of(config, world_size) != world_size;
  const std::string_view key = hybrid ? "zero.shard_group_size" : "zero.hpz_partition_size";
  if (!hybrid && !hpz_enabled(config)) return;
  const std::int64_t size = hybrid ? config.zero.shard_group_size : config.zero.hpz_partition_size;
  throw ConfigError(where_set(config, key) + ": " + std::string(key) + " = " +
                    std::to_string(size) +
                    " groups contiguous ranks the way nodes hold them, "
                    "and this job runs on " +
                    topology.describe() +
                    ": groups would straddle the nodes differently on each; start the same "
                    "number of ranks on every node, or set " +
                    std::string(key) + " = 0");
}

}  // namespace zt::engine
