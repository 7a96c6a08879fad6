// JSON text for the files runs write (memory.json, memory profiles, estimate reports).
#pragma once

#include <string>
#include <string_view>

namespace zt::engine {

// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace zt::engine
