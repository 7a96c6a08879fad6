// Helpers every Store implementation shares: counter values and key lists in messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zt::comm {

// Parses the decimal counter stored at `key`; throws CommError when it is not one.
std::int64_t parse_counter(const std::string& key, const std::string& value);

// current + delta; throws CommError naming `key` when the sum overflows 64 bits.
std::int64_t add_to_counter(const std::string& key, std::int64_t current, std::int64_t delta);

// "a, b, c" (at most the first 8 keys, then "and N more").
std::string join_keys(const std::vector<std::string>& keys);

}  // namespace zt::comm
