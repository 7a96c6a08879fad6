// Writes a Config as TOML from the schema: one [section] per struct, every key in schema
// order, values as literals that read back exactly (shortest round-trip floats).
#include "core/config/config_writer.h"

#include "core/config/config_schema.h"

namespace zt {

std::string config_to_toml(const Config& config) {
  std::string source = config.source;
  // The source goes in a comment, which a line break would end.
  for (char& c : source) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string out =
      "# The effective configuration of a zerotrain run: every key, defaults included.\n";
  out += "# Loaded from: " + source + "\n";
  for (const SectionSpec& section : config_schema()) {
    out += "\n[" + section.name + "]\n";
    for (const KeySpec& key : section.keys) {
      out += key.name + " = " + format_key_value(key, key.read(config)) + "\n";
    }
  }
  return out;
}

}  // namespace zt
