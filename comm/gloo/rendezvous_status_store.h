// RendezvousStatusStore: the Store a rank's Gloo rendezvous goes through. It forwards
// every call, but waits in slices of the status interval and, after each slice that ends
// with keys still missing, says on stderr which ranks (and store keys) it waits for, so a
// node that never comes is visible long before the timeout.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "comm/store/store.h"

namespace zt::comm {

class RendezvousStatusStore final : public Store {
 public:
  // `inner` must outlive this; keys under key_prefix name ranks (rank_of_key). A zero
  // status_interval waits in one piece and says nothing.
  RendezvousStatusStore(Store& inner, std::string key_prefix, int rank,
                        std::chrono::milliseconds status_interval);

  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> try_get(const std::string& key) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  bool delete_key(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  // "rank 1 (store key 'gloo/world/1')" for the keys still missing; empty when none is.
  std::string awaited(const std::vector<std::string>& keys);
  // Says which of keys are still missing after `waited` of `timeout`.
  void report(const std::vector<std::string>& keys, std::chrono::milliseconds waited,
              std::chrono::milliseconds timeout);

  Store& inner_;
  const std::string key_prefix_;
  const int rank_;
  const std::chrono::milliseconds status_interval_;
};

}  // namespace zt::comm
