// Text as a JSON string literal, for every layer that writes JSON (flight records, memory
// reports, metrics, manifests).
#pragma once

#include <string>
#include <string_view>

namespace zt {

// `text` as a JSON string literal, quotes included: `"` and `\` escaped, newline, tab and
// carriage return as \n \t \r, other control characters as \u00XX; the rest as it is (UTF-8).
std::string json_string(std::string_view text);

}  // namespace zt
