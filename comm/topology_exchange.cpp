// exchange_topology: one record per rank in the store ("node local host", "-" for what the
// launcher did not say), read back in rank order.
#include "comm/topology_exchange.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <climits>
#include <optional>
#include <vector>

#include "core/error.h"

namespace zt::comm {
namespace {

std::string field(const std::optional<int>& value) {
  return value ? std::to_string(*value) : std::string("-");
}

std::optional<int> parse_field(const std::string& text, bool& ok) {
  if (text == "-") return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  ok = ok && error == std::errc() && end == text.data() + text.size() && value >= 0;
  return value;
}

std::string encode(const NodeIdentity& identity) {
  return field(identity.node_index) + " " + field(identity.local_rank) + " " + identity.host_name;
}

NodeIdentity decode(const std::string& record, const std::string& key) {
  const std::size_t first = record.find(' ');
  const std::size_t second = first == std::string::npos ? first : record.find(' ', first + 1);
  bool ok = second != std::string::npos;
  NodeIdentity identity;
  if (ok) {
    identity.node_index = parse_field(record.substr(0, first), ok);
    identity.local_rank = parse_field(record.substr(first + 1, second - first - 1), ok);
    identity.host_name = record.substr(second + 1);
  }
  if (!ok) {
    throw CommError("store key '" + key + "' holds '" + record +
                    "', not a rank's node record (\"NODE LOCAL_RANK HOST\"): another program's "
                    "key on this store?");
  }
  return identity;
}

}  // namespace

std::string this_host_name() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return std::string(name.data());
}

Topology exchange_topology(Store& store, const std::string& key_prefix, int rank, int world_size,
                           const NodeIdentity& mine, std::chrono::milliseconds timeout) {
  const auto key_of = [&](int r) { return key_prefix + "topology/" + std::to_string(r); };
  store.set(key_of(rank), encode(mine));
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back(key_of(r));
  store.wait(keys, timeout);  // its TimeoutError names the keys, hence the ranks, missing
  std::vector<NodeIdentity> identities;
  identities.reserve(keys.size());
  for (const std::string& key : keys) identities.push_back(decode(store.get(key, timeout), key));
  return Topology::from_identities(identities);
}

}  // namespace zt::comm
