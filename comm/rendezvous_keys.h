// The store keys of a communicator's rendezvous that others read: a launcher hosting the
// store tells from them which ranks have not arrived, and names the keys ranks wait for.
#pragma once

#include <optional>
#include <string>

namespace zt::comm {

// Every key of group `group_name`'s rendezvous starts with this: "gloo/world/".
std::string rendezvous_key_prefix(const std::string& group_name);

// Set by a rank as it begins the rendezvous under `key_prefix` (its value is the address
// the rank listens on); never deleted, so it also says that the rank once arrived.
std::string joined_key(const std::string& key_prefix, int rank);

// The rank a rendezvous key under `key_prefix` belongs to, when it is a per-rank key
// (the address Gloo publishes, "gloo/world/3", or a joined key); nullopt for others.
std::optional<int> rank_of_key(const std::string& key_prefix, const std::string& key);

}  // namespace zt::comm
