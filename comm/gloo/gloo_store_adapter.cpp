// GlooStoreAdapter: gloo::rendezvous::Store (set/get/wait on byte vectors) over our Store.
#include "comm/gloo/gloo_store_adapter.h"

#include <gloo/rendezvous/store.h>

#include <mutex>
#include <utility>
#include <vector>

namespace zt::comm {

class GlooStoreAdapter::Impl final : public ::gloo::rendezvous::Store {
 public:
  Impl(comm::Store& store, std::string key_prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(key_prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefix_ + key, std::string(data.begin(), data.end()));
    std::lock_guard lock(mutex_);
    keys_set_.push_back(prefix_ + key);
  }

  // Gloo expects get to block until the key exists; ours waits up to the timeout, then
  // throws a TimeoutError naming the key.
  std::vector<char> get(const std::string& key) override {
    const std::string value = store_.get(prefix_ + key, timeout_);
    return {value.begin(), value.end()};
  }

  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }

  // Gloo passes its context timeout, or zero ("no timeout"): we never wait unbounded.
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> prefixed;
    prefixed.reserve(keys.size());
    for (const auto& key : keys) prefixed.push_back(prefix_ + key);
    const bool bounded = timeout.count() > 0 && timeout < timeout_;
    store_.wait(prefixed, bounded ? timeout : timeout_);
  }

  void delete_keys_set() {
    std::lock_guard lock(mutex_);
    for (const auto& key : keys_set_) store_.delete_key(key);
    keys_set_.clear();
  }

 private:
  comm::Store& store_;
  const std::string prefix_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;                   // guards keys_set_ (Gloo may call from its threads)
  std::vector<std::string> keys_set_;  // full keys, prefix included
};

GlooStoreAdapter::GlooStoreAdapter(Store& store, std::string key_prefix,
                                   std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(store, std::move(key_prefix), timeout)) {}

GlooStoreAdapter::~GlooStoreAdapter() = default;

::gloo::rendezvous::Store& GlooStoreAdapter::gloo_store() { return *impl_; }

void GlooStoreAdapter::delete_keys_set() { impl_->delete_keys_set(); }

}  // namespace zt::comm
