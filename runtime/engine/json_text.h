// JSON text for the files runs write (memory.json, memory profiles, estimate reports).
#pragma once

#include <string>
#include <string_view>

#include "core/json_string.h"

namespace zt::engine {

using zt::json_string;  // core's, shared with the layers below

// A double in nine significant digits, as logs and messages print a setting or a measure
// ("1e-09", "0.0004"; std::to_string's six decimals would show a small learning rate as
// 0.000000). Nine digits read back as the float they came from.
std::string number_text(double value);

// number_text, or null when `value` is not finite (JSON has no NaN or infinity).
std::string json_number(double value);

}  // namespace zt::engine
