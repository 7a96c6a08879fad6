// Config: every setting of a run (model, data, train, optimizer, scheduler, zero, precision,
// activation_checkpointing, comm, runtime, run), as a TOML file sets it. docs/CONFIG.md lists
// every key with its default and range.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "core/config/config_loader.h"

namespace zerotrain {

using zt::Config;

// Every key at its default (the built-in tiny MLP).
using zt::default_config;

// Reads the TOML file at `path`, then applies `overrides` in order ("section.key=value", as
// after `--set`). Throws ConfigError naming file:line:col and the key for any mistake.
inline Config load_config(const std::filesystem::path& path,
                          const std::vector<std::string>& overrides = {}) {
  return zt::load_config_file(path, overrides);
}

// The same for TOML text; `source_name` names it in messages.
inline Config parse_config(std::string_view toml_text,
                           const std::vector<std::string>& overrides = {},
                           std::string_view source_name = "<text>") {
  return zt::parse_config_text(toml_text, source_name, overrides);
}

}  // namespace zerotrain
