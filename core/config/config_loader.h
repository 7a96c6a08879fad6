// Loading a run's configuration: a TOML file (or text) plus --set overrides, validated
// once against the schema into a Config. Every mistake is a zt::ConfigError that reads
// like a compiler error: "configs/tiny.toml:14:9: optimizer.lr: expected a float > 0 ...".
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"

namespace zt {

// Every key at its default; `source` is "<defaults>".
Config default_config();

// Parses `toml_text` (named `source_name` in messages and in Config::source), then applies
// `overrides` in order. Each override is "section.key=value", the text after --set; the
// value is a TOML value ("0.1", "true", "\"1MiB\"") or, for string, enum and size keys, a
// bare word ("out/x", "sgd", "1MiB"). Throws ConfigError on any unknown, mistyped or
// out-of-range key.
Config parse_config_text(std::string_view toml_text, std::string_view source_name,
                         const std::vector<std::string>& overrides);

// Reads and parses the file at `path` (named as given in messages), then the overrides.
Config load_config_file(const std::filesystem::path& path,
                        const std::vector<std::string>& overrides);

}  // namespace zt
