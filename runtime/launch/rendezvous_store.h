// RendezvousStore: the store a rank of a multi-rank run talks to, served by the launcher
// or, when no launcher runs, by rank 0 itself for as long as the job lasts.
#pragma once

#include <chrono>
#include <memory>

#include "comm/store/store.h"
#include "runtime/launch/rank_env.h"

namespace zt::comm {
class TcpStoreServer;
}

namespace zt::launch {

class RendezvousStore {
 public:
  // Rank 0 of a run without launcher first starts the server on env.store_bind_address:
  // env.master_port (throwing CommError naming the address, where MASTER_PORT came from
  // and what to do when it cannot listen); then every rank connects, retrying for
  // `timeout` while the server is not up yet.
  RendezvousStore(const RankEnv& env, std::chrono::milliseconds timeout);
  ~RendezvousStore();

  RendezvousStore(const RendezvousStore&) = delete;
  RendezvousStore& operator=(const RendezvousStore&) = delete;

  comm::Store& store() { return *client_; }

  // Every rank calls this once, after its last use of the store. Rank 0, when it serves
  // the store, then waits (at most `timeout`) until every rank has, so that no rank is
  // still reading when the server closes; a TimeoutError names the ranks not done.
  void finish(std::chrono::milliseconds timeout);

 private:
  RankEnv env_;
  std::unique_ptr<comm::TcpStoreServer> server_;  // rank 0 without launcher only
  std::unique_ptr<comm::Store> client_;
};

}  // namespace zt::launch
