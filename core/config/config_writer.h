// The effective configuration as a TOML file, every key written out, so a run directory
// records exactly what ran and can be re-run from it.
#pragma once

#include <string>

#include "core/config/config.h"

namespace zt {

// Valid TOML holding every key of `config`; parse_config_text reads it back to an equal
// Config (source aside).
std::string config_to_toml(const Config& config);

}  // namespace zt
