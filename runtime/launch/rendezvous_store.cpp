// RendezvousStore: starting rank 0's server when no launcher serves the store, connecting
// every rank, and the exit handshake that lets rank 0 close the server last.
#include "runtime/launch/rendezvous_store.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"
#include "core/error.h"

namespace zt::launch {
namespace {

constexpr const char* kDoneKeyPrefix = "zerotrain/rank_done/";

std::unique_ptr<comm::TcpStoreServer> serve_store(const RankEnv& env) {
  try {
    return std::make_unique<comm::TcpStoreServer>(
        env.store_bind_address, static_cast<std::uint16_t>(env.master_port), env.store_token);
  } catch (const CommError& e) {
    throw CommError(std::string(e.what()) + "; rank 0 serves the store at " +
                    describe_store_location(env) + " since no `zerotrain launch` does: export " +
                    "MASTER_PORT=<a free port> (and MASTER_ADDR=<rank 0's host>) for every rank");
  }
}

}  // namespace

RendezvousStore::RendezvousStore(const RankEnv& env, std::chrono::milliseconds timeout)
    : env_(env) {
  const bool serves = env.store_host == StoreHost::kRankZero && env.rank == 0;
  std::string connect_to = env.master_addr;
  if (serves) {
    server_ = serve_store(env);
    const std::string started_by =
        env.source == "torchrun" ? "with RANK and WORLD_SIZE set" : "by " + env.source;
    std::fprintf(stderr,
                 "zerotrain: ranks started %s, not by zerotrain launch: rank 0 serves the "
                 "store at %s, listening on %s\n",
                 started_by.c_str(), describe_store_location(env).c_str(),
                 env.store_bind_address.c_str());
    // Rank 0 connects over TCP too, so every rank's store behaves the same.
    connect_to = env.store_bind_address == "0.0.0.0" ? "127.0.0.1" : env.store_bind_address;
  }
  try {
    client_ = std::make_unique<comm::TcpStore>(
        connect_to, static_cast<std::uint16_t>(env.master_port), env.store_token, timeout);
  } catch (const TimeoutError& e) {
    if (env.store_host != StoreHost::kRankZero) throw;
    throw TimeoutError(std::string(e.what()) + "; without `zerotrain launch`, rank 0 serves " +
                       "the store at " + describe_store_location(env) +
                       ": check that rank 0 started and that every rank sees the same " +
                       "MASTER_ADDR and MASTER_PORT");
  }
}

RendezvousStore::~RendezvousStore() = default;

void RendezvousStore::finish(std::chrono::milliseconds timeout) {
  if (env_.store_host != StoreHost::kRankZero) return;
  client_->set(kDoneKeyPrefix + std::to_string(env_.rank), "1");
  if (!server_) return;
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(env_.world_size));
  for (int rank = 0; rank < env_.world_size; ++rank) {
    keys.push_back(kDoneKeyPrefix + std::to_string(rank));
  }
  client_->wait(keys, timeout);
}

}  // namespace zt::launch
