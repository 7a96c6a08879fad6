// The key-value store interface ranks rendezvous through. Implementations:
// MemoryStore (one process, ranks as threads) and TcpStore (a client of TcpStoreServer).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zt::comm {

// Values are byte strings; std::string is used as a byte container.
class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::string& value) = 0;

  // The value of `key`, or nullopt when it is not set (does not wait).
  virtual std::optional<std::string> try_get(const std::string& key) = 0;

  // Waits until `key` is set, then returns its value; throws TimeoutError naming the key.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;

  // Adds `delta` to the integer stored at `key` (absent counts as 0); returns the new value.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;

  // Sets `key` to `desired` if its current value is `expected` (an absent key matches an
  // empty `expected`). Returns the value stored afterwards, so success is `== desired`.
  virtual std::string compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired) = 0;

  // Removes `key`; returns whether it existed.
  virtual bool delete_key(const std::string& key) = 0;

  // Waits until every key is set; throws TimeoutError naming the keys still missing.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
};

}  // namespace zt::comm
