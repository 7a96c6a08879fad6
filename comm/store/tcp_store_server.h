// TcpStoreServer: the store's TCP server, run by the launcher of node 0 or by rank 0. It
// owns one io thread that serves every client asynchronously, waits included.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zt::comm {

// What a launcher hosting the store shows while ranks gather.
struct StoreServerStatus {
  std::vector<std::string> missing;       // of the keys asked about, those not set
  std::vector<std::string> awaited_keys;  // keys that parked get/wait requests wait for
};

struct TcpStoreServerOptions {
  std::string host = "127.0.0.1";  // the address to bind
  std::uint16_t port = 0;          // 0 picks a free port; port() tells which
  std::string token;               // clients must present it in their handshake
  // A connection that has not completed its handshake by then is dropped.
  std::chrono::milliseconds handshake_timeout{5000};
};

// RAII: the constructor binds, listens and starts the io thread (throwing CommError when
// it cannot listen); the destructor closes every connection and joins the thread.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(TcpStoreServerOptions options);
  TcpStoreServer(std::string host, std::uint16_t port, std::string token);
  ~TcpStoreServer();

  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  const std::string& host() const;
  std::uint16_t port() const;

  // Requests (get or wait) parked until keys are set; for diagnostics and tests.
  std::size_t waiting_requests() const;

  // Which of `keys` are not set, and which keys the parked requests wait for, read on the
  // io thread; nullopt when it did not answer within `bound` (it is busy or stopped).
  std::optional<StoreServerStatus> status(
      const std::vector<std::string>& keys,
      std::chrono::milliseconds bound = std::chrono::milliseconds(1000)) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::comm
