// GlooStoreAdapter: lets Gloo's rendezvous talk to our Store. Keys go under a per-group
// prefix so several communicators share one store; Gloo's get blocks until the key exists.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/store/store.h"

namespace gloo::rendezvous {
class Store;
}  // namespace gloo::rendezvous

namespace zt::comm {

class GlooStoreAdapter {
 public:
  // Every wait (and get) is bounded by `timeout`; `store` must outlive the adapter.
  GlooStoreAdapter(Store& store, std::string key_prefix, std::chrono::milliseconds timeout);
  GlooStoreAdapter(const GlooStoreAdapter&) = delete;
  GlooStoreAdapter& operator=(const GlooStoreAdapter&) = delete;
  ~GlooStoreAdapter();

  // The view Gloo's rendezvous uses (gloo::rendezvous::Context::connectFullMesh).
  ::gloo::rendezvous::Store& gloo_store();

  // Removes the keys this adapter set. Call once every peer has read them (after the
  // rendezvous barrier), so the group name can be used again later.
  void delete_keys_set();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::comm
