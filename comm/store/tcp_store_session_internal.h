// Private to comm/store: what the TCP store server's acceptor and its sessions share.
// Includes Asio, so only the server's own .cpp files may include it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "comm/store/store_asio_internal.h"
#include "comm/store/store_table.h"
#include "comm/store/tcp_store_server.h"

namespace zt::comm {

class StoreSession;

// The server's state. Confined to the io thread, except `waiting`, an atomic mirror of the
// number of parked get/wait requests that other threads may read.
struct StoreServerShared {
  explicit StoreServerShared(TcpStoreServerOptions opts) : options(std::move(opts)) {}

  // Hands the waiters parked on `key` back to their sessions to recheck (it was just set).
  void wake(const std::string& key);

  const TcpStoreServerOptions options;
  StoreTable table;
  std::unordered_map<std::uint64_t, std::weak_ptr<StoreSession>> sessions;  // by waiter id
  std::uint64_t next_session_id = 1;
  std::atomic<std::size_t> waiting{0};
};

// Serves one accepted connection until it closes; the session keeps itself alive through
// its pending handlers.
void start_store_session(boost::asio::ip::tcp::socket socket, StoreServerShared& shared);

}  // namespace zt::comm
