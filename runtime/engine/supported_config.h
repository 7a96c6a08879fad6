// check_supported: the settings the schema accepts that this build or machine cannot run,
// refused before a rank allocates anything or run.dir gets any output.
#pragma once

#include "core/config/config.h"

namespace zt::engine {

// Raises ConfigError for settings this build accepts in the schema but cannot run yet.
// With `check_files`, also that offload.nvme_path is a directory that can hold state files.
void check_supported(const Config& config, bool check_files = true);

// Raises ConfigError when zero.shard_group_size cannot split `world_size` ranks into equal
// shard groups (it must divide the world), or is set with zero.stage = 0, which shards nothing.
void check_shard_group_size(const Config& config, int world_size);

}  // namespace zt::engine
