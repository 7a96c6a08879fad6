// TcpStoreServer: binds, accepts and owns the io thread; each connection is a
// StoreSession (tcp_store_session.cpp). All store state is confined to the io thread.
#include "comm/store/tcp_store_server.h"

#include <cstdio>
#include <exception>
#include <future>
#include <thread>

#include "comm/store/store_asio_internal.h"
#include "comm/store/tcp_store_session_internal.h"
#include "core/error.h"

namespace zt::comm {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

std::string lowercase_first(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

}  // namespace

class TcpStoreServer::Impl {
 public:
  explicit Impl(TcpStoreServerOptions options) : shared_(std::move(options)) {
    listen();
    accept_next();
    thread_ = std::thread([this] { run(); });
  }

  ~Impl() {
    // Stopping abandons the pending handlers; destroying io_ then destroys them, and with
    // them the sessions and their sockets. shared_ is declared first, so it outlives them.
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  const std::string& host() const { return shared_.options.host; }
  std::uint16_t port() const { return port_; }
  std::size_t waiting_requests() const { return shared_.waiting.load(); }

  std::optional<StoreServerStatus> status(const std::vector<std::string>& keys,
                                          std::chrono::milliseconds bound) {
    // Shared with the handler, which may run after we gave up waiting for it.
    auto answer = std::make_shared<std::promise<StoreServerStatus>>();
    std::future<StoreServerStatus> result = answer->get_future();
    asio::post(io_, [this, answer, keys] {
      answer->set_value(
          StoreServerStatus{shared_.table.missing(keys), shared_.table.parked_keys()});
    });
    if (result.wait_for(bound) != std::future_status::ready) return std::nullopt;
    return result.get();
  }

 private:
  [[noreturn]] void fail_listen(const boost::system::error_code& ec) const {
    throw CommError("store: cannot listen on " + shared_.options.host + ":" +
                    std::to_string(shared_.options.port) + ": " + lowercase_first(ec.message()));
  }

  tcp::endpoint bind_endpoint() {
    const auto& options = shared_.options;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options.host, ec);
    if (!ec) return {address, options.port};
    tcp::resolver resolver(io_);
    const auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (ec) fail_listen(ec);
    if (results.empty()) fail_listen(asio::error::host_not_found);
    return results.begin()->endpoint();
  }

  void listen() {
    const tcp::endpoint endpoint = bind_endpoint();
    boost::system::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) fail_listen(ec);
    port_ = acceptor_.local_endpoint().port();
  }

  void accept_next() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        start_store_session(std::move(socket), shared_);
        accept_next();
        return;
      }
      // Out of file descriptors and the like: say so, then retry after a pause rather than
      // spinning on an error that is still there.
      std::fprintf(stderr, "zerotrain: store server: accept failed: %s\n", ec.message().c_str());
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([this](const boost::system::error_code& wait_ec) {
        if (!wait_ec) accept_next();
      });
    });
  }

  void run() noexcept {
    // Handlers catch what they expect; anything else is logged and the loop goes on, so one
    // bad connection cannot take the store down.
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "zerotrain: store server: unexpected error: %s\n", e.what());
      }
    }
  }

  StoreServerShared shared_;  // confined to the io thread, except the atomic `waiting`
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer retry_timer_{io_};
  std::uint16_t port_ = 0;  // written before the io thread starts, then read-only
  std::thread thread_;
};

TcpStoreServer::TcpStoreServer(TcpStoreServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

TcpStoreServer::TcpStoreServer(std::string host, std::uint16_t port, std::string token)
    : TcpStoreServer(TcpStoreServerOptions{std::move(host), port, std::move(token)}) {}

TcpStoreServer::~TcpStoreServer() = default;

const std::string& TcpStoreServer::host() const { return impl_->host(); }
std::uint16_t TcpStoreServer::port() const { return impl_->port(); }
std::size_t TcpStoreServer::waiting_requests() const { return impl_->waiting_requests(); }
std::optional<StoreServerStatus> TcpStoreServer::status(const std::vector<std::string>& keys,
                                                        std::chrono::milliseconds bound) const {
  return impl_->status(keys, bound);
}

}  // namespace zt::comm
