// Naming of the rendezvous keys, and reading a rank back out of one.
#include "comm/rendezvous_keys.h"

#include <charconv>

namespace zt::comm {
namespace {

constexpr std::string_view kJoined = "joined/";

std::optional<int> parse_rank(std::string_view text) {
  int rank = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || rank < 0) {
    return std::nullopt;
  }
  return rank;
}

}  // namespace

std::string rendezvous_key_prefix(const std::string& group_name) {
  return "gloo/" + group_name + "/";
}

std::string joined_key(const std::string& key_prefix, int rank) {
  return key_prefix + std::string(kJoined) + std::to_string(rank);
}

std::optional<int> rank_of_key(const std::string& key_prefix, const std::string& key) {
  if (key.rfind(key_prefix, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(key).substr(key_prefix.size());
  if (rest.substr(0, kJoined.size()) == kJoined) rest.remove_prefix(kJoined.size());
  return parse_rank(rest);
}

}  // namespace zt::comm
