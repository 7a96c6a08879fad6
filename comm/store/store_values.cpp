// Counter parsing and key-list formatting shared by the store implementations.
#include "comm/store/store_values.h"

#include <charconv>

#include "core/error.h"

namespace zt::comm {

std::int64_t parse_counter(const std::string& key, const std::string& value) {
  std::int64_t result = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, result);
  if (ec != std::errc() || ptr != end) {
    throw CommError("store: add on key '" + key + "' whose value is not an integer counter");
  }
  return result;
}

std::int64_t add_to_counter(const std::string& key, std::int64_t current, std::int64_t delta) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(current, delta, &result)) {
    throw CommError("store: add of " + std::to_string(delta) + " to key '" + key +
                    "' overflows its 64-bit counter");
  }
  return result;
}

std::string join_keys(const std::vector<std::string>& keys) {
  constexpr std::size_t kShown = 8;
  std::string out;
  for (std::size_t i = 0; i < keys.size() && i < kShown; ++i) {
    if (i) out += ", ";
    out += "'" + keys[i] + "'";
  }
  if (keys.size() > kShown) out += " and " + std::to_string(keys.size() - kShown) + " more";
  return out;
}

}  // namespace zt::comm
