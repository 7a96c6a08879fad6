// The TCP store server's data and its index of requests waiting for keys. Not thread-safe
// by design: the server confines it to its io thread. Free of Asio so it is unit tested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace zt::comm {

class StoreTable {
 public:
  using WaiterId = std::uint64_t;

  void set(const std::string& key, std::string value);
  // The value of `key`, or nullptr; valid until the next change to the table.
  const std::string* find(const std::string& key) const;
  // Same semantics as Store::add/compare_set/delete_key (MemoryStore is the reference).
  std::int64_t add(const std::string& key, std::int64_t delta);
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired);
  bool erase(const std::string& key);

  // The keys among `keys` that are not set, in their order.
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;

  // Note [Parked waiters]: a waiting request parks on one key it misses, never on several,
  // so it sits in exactly one list. When that key is set, take_parked() hands it back; the
  // waiter then rechecks all its keys and either completes or parks on the next missing one.
  void park(const std::string& key, WaiterId waiter);
  void unpark(const std::string& key, WaiterId waiter);
  std::vector<WaiterId> take_parked(const std::string& key);
  std::size_t parked_count() const { return parked_count_; }
  // The keys some waiter is parked on (each one missing), sorted.
  std::vector<std::string> parked_keys() const;

 private:
  std::unordered_map<std::string, std::string> values_;
  std::unordered_map<std::string, std::vector<WaiterId>> parked_;
  std::size_t parked_count_ = 0;
};

}  // namespace zt::comm
