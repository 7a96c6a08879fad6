// An in-process Store for ranks that run as threads of one process (and for world size 1):
// the same semantics as TcpStore, without a network.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "comm/store/store.h"

namespace zt::comm {

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> try_get(const std::string& key) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  bool delete_key(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  std::mutex mutex_;                 // guards values_
  std::condition_variable changed_;  // notified on every set/add/compare_set
  std::map<std::string, std::string> values_;
};

}  // namespace zt::comm
