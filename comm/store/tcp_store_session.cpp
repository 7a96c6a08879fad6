// StoreSession: one client connection of the TCP store server, on the server's io thread:
// handshake, request dispatch, parked get/wait requests with their timers, ordered writes.
#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <optional>
#include <variant>
#include <vector>

#include "comm/store/store_asio_internal.h"
#include "comm/store/store_protocol.h"
#include "comm/store/store_token.h"
#include "comm/store/tcp_store_session_internal.h"
#include "core/error.h"

namespace zt::comm {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
namespace p = protocol;

namespace {
constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;
// Longer timeouts are clamped so the timer's time point cannot overflow.
constexpr std::uint64_t kMaxWaitMs = std::uint64_t{30} * 24 * 3600 * 1000;

p::Response reply(p::Reply kind, std::string text = {}) {
  p::Response r;
  r.kind = kind;
  r.text = std::move(text);
  return r;
}

// A get or wait request that is waiting for its keys.
struct PendingWait {
  std::vector<std::string> keys;
  bool is_get = false;  // get replies with the value of keys[0]; wait replies kOk
  std::uint64_t seq = 0;
  bool parked = false;  // counted in shared_.waiting, and parked on `parked_on`
  std::string parked_on;
};

}  // namespace

class StoreSession : public std::enable_shared_from_this<StoreSession> {
 public:
  StoreSession(tcp::socket socket, StoreServerShared& shared, std::uint64_t id)
      : socket_(std::move(socket)),
        shared_(shared),
        id_(id),
        handshake_timer_(socket_.get_executor()),
        wait_timer_(socket_.get_executor()) {
    error_code ec;
    const auto peer = socket_.remote_endpoint(ec);
    peer_ = ec ? std::string("an unknown peer")
               : peer.address().to_string() + ":" + std::to_string(peer.port());
  }

  void start() {
    error_code ignored;  // a peer that already left is noticed by the first read
    socket_.set_option(tcp::no_delay(true), ignored);
    handshake_timer_.expires_after(shared_.options.handshake_timeout);
    handshake_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (!ec && !self->authenticated_) {
        self->drop("no handshake within " +
                   std::to_string(self->shared_.options.handshake_timeout.count()) + " ms");
      }
    });
    read_more();
  }

  // A key this session's pending wait was parked on has been set.
  void recheck_wait() {
    if (!closed_ && wait_) try_finish_wait();
  }

 private:
  void read_more() {
    socket_.async_read_some(
        asio::buffer(read_buf_),
        [self = shared_from_this()](const error_code& ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(const error_code& ec, std::size_t n) {
    if (closed_) return;
    if (ec) {  // the peer closed or reset the connection: routine, not worth a log line
      close();
      return;
    }
    try {
      parser_.feed(read_buf_.data(), n);
      while (!closed_ && !close_after_write_) {
        std::optional<p::Frame> frame = parser_.next();
        if (!frame) break;
        handle_frame(*frame);
      }
    } catch (const p::ProtocolError& e) {
      drop(e.what());
      return;
    } catch (const std::exception& e) {
      drop(std::string("error while serving it: ") + e.what());
      return;
    }
    if (!closed_ && !close_after_write_) read_more();
  }

  void handle_frame(const p::Frame& frame) {
    // One request at a time (Note [Store protocol, version 1]): a client that does not wait
    // for its reply is not one of ours.
    if (wait_) throw p::ProtocolError("a request arrived before the previous reply was sent");
    p::Request request = p::decode_request(frame);
    if (!authenticated_) {
      handshake(request, frame.op);
      return;
    }
    std::visit([this](auto& r) { handle(r); }, request);
  }

  void handshake(const p::Request& request, std::uint8_t op) {
    const auto* hello = std::get_if<p::HandshakeRequest>(&request);
    if (!hello) {
      throw p::ProtocolError("expected a handshake, got a " + std::string(p::op_name(op)) +
                             " request");
    }
    handshake_timer_.cancel();
    std::string refusal;
    if (hello->magic != p::kMagic) {
      refusal = "not a zerotrain store client (bad magic number)";
    } else if (hello->version != p::kVersion) {
      refusal = "client speaks protocol version " + std::to_string(hello->version) +
                ", this server speaks " + std::to_string(p::kVersion);
    } else if (!tokens_equal(hello->token, shared_.options.token)) {
      refusal = std::string("wrong token (the client's ") + kStoreTokenEnvVar +
                " must be the launcher's)";
    }
    if (!refusal.empty()) {
      log("refused connection from " + peer_ + ": " + refusal);
      close_after_write_ = true;
      send(reply(p::Reply::kError, "the store server refused this client: " + refusal));
      return;
    }
    authenticated_ = true;
    parser_.set_max_payload_bytes(p::kMaxPayloadBytes);
    send(reply(p::Reply::kOk));
  }

  void handle(p::HandshakeRequest&) { throw p::ProtocolError("a second handshake"); }

  void handle(p::SetRequest& r) {
    shared_.table.set(r.key, std::move(r.value));
    send(reply(p::Reply::kOk));
    shared_.wake(r.key);
  }

  void handle(p::TryGetRequest& r) {
    const std::string* value = shared_.table.find(r.key);
    send(value ? reply(p::Reply::kValue, *value) : reply(p::Reply::kNotFound));
  }

  void handle(p::GetRequest& r) { begin_wait({std::move(r.key)}, true, r.timeout_ms); }

  void handle(p::AddRequest& r) {
    p::Response response;
    try {
      response.number = shared_.table.add(r.key, r.delta);
      response.kind = p::Reply::kCounter;
    } catch (const CommError& e) {  // not a counter, or it would overflow: the caller's error
      response = reply(p::Reply::kError, e.what());
    }
    const bool changed = response.kind == p::Reply::kCounter;
    send(response);
    if (changed) shared_.wake(r.key);
  }

  void handle(p::CompareSetRequest& r) {
    send(reply(p::Reply::kValue, shared_.table.compare_set(r.key, r.expected, r.desired)));
    if (shared_.table.find(r.key)) shared_.wake(r.key);
  }

  void handle(p::DeleteRequest& r) {
    p::Response response = reply(p::Reply::kDeleted);
    response.number = shared_.table.erase(r.key) ? 1 : 0;
    send(response);
  }

  void handle(p::WaitRequest& r) { begin_wait(std::move(r.keys), false, r.timeout_ms); }

  void begin_wait(std::vector<std::string> keys, bool is_get, std::uint64_t timeout_ms) {
    wait_.emplace();
    wait_->keys = std::move(keys);
    wait_->is_get = is_get;
    wait_->seq = ++wait_seq_;
    if (try_finish_wait()) return;
    const auto timeout =
        static_cast<std::chrono::milliseconds::rep>(std::min(timeout_ms, kMaxWaitMs));
    wait_timer_.expires_after(std::chrono::milliseconds(timeout));
    // The seq check drops an expiry that was already queued when the wait completed.
    wait_timer_.async_wait([self = shared_from_this(), seq = wait_->seq](const error_code& ec) {
      if (!ec && self->wait_ && self->wait_->seq == seq) self->expire_wait();
    });
  }

  // Completes the pending wait if all its keys are set; otherwise parks it on the first
  // missing key (Note [Parked waiters]) and returns false.
  bool try_finish_wait() {
    std::vector<std::string> missing = shared_.table.missing(wait_->keys);
    if (missing.empty()) {
      p::Response response = wait_->is_get
                                 ? reply(p::Reply::kValue, *shared_.table.find(wait_->keys[0]))
                                 : reply(p::Reply::kOk);
      end_wait();
      send(response);
      return true;
    }
    if (!wait_->parked) {
      wait_->parked = true;
      ++shared_.waiting;
    }
    wait_->parked_on = std::move(missing.front());
    shared_.table.park(wait_->parked_on, id_);
    return false;
  }

  void expire_wait() {
    p::Response response = reply(p::Reply::kTimedOut);
    response.keys = shared_.table.missing(wait_->keys);
    end_wait();
    send(response);
  }

  void end_wait() {
    if (wait_->parked) {
      shared_.table.unpark(wait_->parked_on, id_);  // a no-op if wake() already took it
      --shared_.waiting;
    }
    wait_timer_.cancel();
    wait_.reset();
  }

  void send(const p::Response& response) {
    if (closed_) return;
    out_.push_back(p::encode_response(response));
    if (!writing_) write_next();
  }

  void write_next() {
    writing_ = true;
    asio::async_write(
        socket_, asio::buffer(out_.front()),
        [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_written(ec); });
  }

  void on_written(const error_code& ec) {
    writing_ = false;
    if (closed_) return;
    if (ec) {
      close();
      return;
    }
    out_.pop_front();
    if (!out_.empty()) {
      write_next();
    } else if (close_after_write_) {
      error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      close();
    }
  }

  void log(const std::string& message) const {
    std::fprintf(stderr, "zerotrain: store server: %s\n", message.c_str());
  }

  // Closes a connection that broke the protocol, saying why once.
  void drop(const std::string& reason) {
    if (closed_) return;
    log("dropped connection from " + peer_ + ": " + reason);
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    if (wait_) end_wait();
    shared_.sessions.erase(id_);
    handshake_timer_.cancel();
    error_code ignored;
    socket_.close(ignored);
  }

  tcp::socket socket_;
  StoreServerShared& shared_;
  const std::uint64_t id_;  // also this session's waiter id in shared_.table
  std::string peer_;        // "address:port", for log lines
  asio::steady_timer handshake_timer_;
  asio::steady_timer wait_timer_;
  p::FrameParser parser_{p::kMaxHandshakePayloadBytes};
  std::array<char, kReadChunkBytes> read_buf_{};
  std::deque<std::string> out_;  // encoded replies; the front one is being written
  bool writing_ = false;
  bool authenticated_ = false;
  bool close_after_write_ = false;  // a refused handshake: send the refusal, then close
  bool closed_ = false;
  std::optional<PendingWait> wait_;
  std::uint64_t wait_seq_ = 0;
};

void StoreServerShared::wake(const std::string& key) {
  for (const auto id : table.take_parked(key)) {
    auto it = sessions.find(id);
    if (it == sessions.end()) continue;
    if (auto session = it->second.lock()) session->recheck_wait();
  }
}

void start_store_session(tcp::socket socket, StoreServerShared& shared) {
  const std::uint64_t id = shared.next_session_id++;
  auto session = std::make_shared<StoreSession>(std::move(socket), shared, id);
  shared.sessions.emplace(id, session);
  session->start();
}

}  // namespace zt::comm
