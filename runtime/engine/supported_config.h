// check_supported: the settings the schema accepts that this build or machine cannot run,
// refused before a rank allocates anything or run.dir gets any output.
#pragma once

#include "core/config/config.h"

namespace zt::engine {

// Raises ConfigError for settings this build accepts in the schema but cannot run yet.
// With `check_files`, also that offload.nvme_path is a directory that can hold state files.
void check_supported(const Config& config, bool check_files = true);

}  // namespace zt::engine
