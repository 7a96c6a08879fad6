// Numbers as logs and messages print them.
#include "runtime/engine/json_text.h"

#include <cmath>
#include <cstdio>

namespace zt::engine {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string json_number(double value) {
  return std::isfinite(value) ? number_text(value) : std::string("null");
}

}  // namespace zt::engine
