// check_supported: the settings the schema accepts that this build or machine cannot run,
// refused before a rank allocates anything or run.dir gets any output.
#pragma once

#include "comm/topology.h"
#include "core/config/config.h"

namespace zt::engine {

// Raises ConfigError for settings this build accepts in the schema but cannot run yet.
// With `check_files`, also that offload.nvme_path is a directory that can hold state files.
void check_supported(const Config& config, bool check_files = true);

// Raises ConfigError when zero.shard_group_size cannot split `world_size` ranks into equal
// shard groups (it must divide the world), or is set with zero.stage = 0, which shards nothing.
void check_shard_group_size(const Config& config, int world_size);

// Raises ConfigError when zero.hpz_partition_size is set (> 1) without zero.stage = 3, or does
// not divide the shard group (zero.shard_group_size, or the world), whose shards it re-cuts.
void check_hpz_partition_size(const Config& config, int world_size);

// Raises ConfigError when zero.quantized_weights is set without zero.stage = 3: only stage 3
// all-gathers parameters (stages 1-2 gather exact ones after every update).
void check_quantized_weights(const Config& config);

// Raises ConfigError when zero.quantized_gradients (or one of its options) is set without
// zero.stage = 2 or 3: stage 0 all-reduces and stage 1 reduces full gradients in place once a
// step, neither through the per-block reduce-scatter that qgZ replaces.
void check_quantized_gradients(const Config& config);

// Raises ConfigError when hybrid sharding or hpZ groups contiguous ranks as nodes on a job
// whose nodes hold different numbers of ranks (`topology`, as the ranks agreed on it): a
// group would then straddle nodes differently on each node.
void check_groups_fit_nodes(const Config& config, const comm::Topology& topology);

}  // namespace zt::engine
