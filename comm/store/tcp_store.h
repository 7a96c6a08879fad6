// TcpStore: the Store that ranks use across processes, a client of TcpStoreServer. One
// connection, guarded by one mutex, so several threads of a rank may share it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/store/store.h"

namespace zt::comm {

inline constexpr std::chrono::milliseconds kDefaultStoreTimeout{30000};

struct TcpStoreOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;  // must match the server's (ZEROTRAIN_STORE_TOKEN)
  // Bounds every call's round trip; get/wait take their own timeout and get this much
  // more for the reply to arrive.
  std::chrono::milliseconds timeout = kDefaultStoreTimeout;
  // How long to keep retrying a refused connection: the server may start after us.
  std::chrono::milliseconds connect_timeout = kDefaultStoreTimeout;
  // While connecting takes longer, say on stderr every this often why (0: never).
  std::chrono::milliseconds status_interval = std::chrono::seconds(5);
};

class TcpStore final : public Store {
 public:
  // Connects and completes the handshake before returning: throws TimeoutError when no
  // server answers within connect_timeout (naming the last reason, e.g. "connection
  // refused by HOST:PORT"), CommError when the server refuses the token.
  explicit TcpStore(TcpStoreOptions options);
  TcpStore(std::string host, std::uint16_t port, std::string token,
           std::chrono::milliseconds timeout = kDefaultStoreTimeout);
  ~TcpStore() override;

  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::string& value) override;
  std::optional<std::string> try_get(const std::string& key) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  std::string compare_set(const std::string& key, const std::string& expected,
                          const std::string& desired) override;
  bool delete_key(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  // "host:port", as messages name the server.
  const std::string& address() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zt::comm
