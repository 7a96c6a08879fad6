// Escaping text into a JSON string literal; numbers as logs and messages print them.
#include "runtime/engine/json_text.h"

#include <cmath>
#include <cstdio>

namespace zt::engine {

std::string json_string(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string json_number(double value) {
  return std::isfinite(value) ? number_text(value) : std::string("null");
}

}  // namespace zt::engine
