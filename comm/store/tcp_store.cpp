// TcpStore: connects (retrying until the connect deadline), completes the handshake, then
// runs each call as one request and one reply under a deadline on a private io_context.
#include "comm/store/tcp_store.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/store/store_asio_internal.h"
#include "comm/store/store_protocol.h"
#include "comm/store/store_values.h"
#include "core/error.h"

namespace zt::comm {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
namespace p = protocol;

namespace {

constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;
constexpr std::chrono::milliseconds kFirstRetryDelay{20};
constexpr std::chrono::milliseconds kMaxRetryDelay{500};
// Timeouts beyond this are clamped, so deadlines cannot overflow the clock.
constexpr std::chrono::milliseconds kMaxTimeout{std::chrono::hours(24 * 30)};

std::chrono::milliseconds clamp_timeout(std::chrono::milliseconds t) {
  return std::clamp(t, std::chrono::milliseconds(0), kMaxTimeout);
}

std::string ms(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

// "get('rank/0/addr')": how messages name a call.
std::string describe(const char* op, const std::vector<std::string>& keys) {
  return std::string(op) + "(" + join_keys(keys) + ")";
}

enum class Io { kOk, kTimedOut, kClosed, kFailed };

}  // namespace

class TcpStore::Impl {
 public:
  explicit Impl(TcpStoreOptions options)
      : options_(std::move(options)),
        address_(options_.host + ":" + std::to_string(options_.port)),
        read_buf_(kReadChunkBytes) {
    std::lock_guard lock(mutex_);
    connect_locked();
  }

  ~Impl() {
    error_code ignored;
    socket_.close(ignored);
  }

  const std::string& address() const { return address_; }

  // Sends `request` and returns its reply. `server_wait` is how long the server may hold the
  // reply back (get/wait); the round trip gets options_.timeout on top of it.
  p::Response call(const p::Request& request, const std::string& what,
                   std::chrono::milliseconds server_wait = std::chrono::milliseconds(0)) {
    std::string frame;
    try {
      frame = p::encode_request(request);
    } catch (const CommError& e) {
      throw CommError(prefix() + what + ": " + e.what());
    }
    std::lock_guard lock(mutex_);
    if (!socket_.is_open()) connect_locked();  // a previous call lost the connection
    const auto budget = clamp_timeout(server_wait) + clamp_timeout(options_.timeout);
    const auto deadline = Clock::now() + budget;
    error_code ec;
    Io io = write_locked(frame, deadline, ec);
    p::Frame reply_frame;
    if (io == Io::kOk) io = read_locked(deadline, reply_frame, ec);
    if (io != Io::kOk) fail_io(io, ec, what, budget);
    try {
      return p::decode_response(reply_frame);
    } catch (const p::ProtocolError& e) {
      disconnect_locked();
      throw CommError(prefix() + "malformed reply to " + what + ": " + e.what());
    }
  }

  // Throws unless `reply` is of the kind `what` expects; kError carries the server's reason.
  void expect(const p::Response& reply, p::Reply kind, const std::string& what) const {
    if (reply.kind == kind) return;
    if (reply.kind == p::Reply::kError) throw CommError(prefix() + what + ": " + reply.text);
    throw CommError(prefix() + "unexpected reply to " + what);
  }

  [[noreturn]] void throw_keys_timeout(const p::Response& reply,
                                       std::chrono::milliseconds timeout) const {
    throw TimeoutError(prefix() + "timed out after " + ms(timeout) + " waiting for keys " +
                       join_keys(reply.keys) + " (set by another rank that has not arrived)");
  }

 private:
  std::string prefix() const { return "store " + address_ + ": "; }

  [[noreturn]] void fail_io(Io io, const error_code& ec, const std::string& what,
                            std::chrono::milliseconds budget) {
    disconnect_locked();
    if (io == Io::kTimedOut) {
      throw TimeoutError(prefix() + "timed out after " + ms(budget) + " waiting for the reply to " +
                         what + " (is the server overloaded or stopped?)");
    }
    if (io == Io::kClosed) {
      throw CommError(prefix() + "the server closed the connection during " + what +
                      " (did the launcher or rank 0 exit?)");
    }
    throw CommError(prefix() + what + " failed: " + ec.message());
  }

  // Retries refused connections until connect_timeout: the server may start after us.
  void connect_locked() {
    const auto start = Clock::now();
    const auto deadline = start + clamp_timeout(options_.connect_timeout);
    auto next_status = start + options_.status_interval;
    auto delay = kFirstRetryDelay;
    std::string last_error = "none";
    const auto give_up = [&] {
      throw TimeoutError(prefix() + "could not connect within " + ms(options_.connect_timeout) +
                         " (is the launcher running?); last error: " + last_error);
    };
    for (;;) {
      if (try_connect_locked(deadline, last_error)) return;
      const auto now = Clock::now();
      if (now >= deadline) give_up();
      if (options_.status_interval.count() > 0 && now >= next_status) {
        // The mark passed, not the clock: "after 5 s" reads the same however late we woke.
        std::fprintf(stderr, "zerotrain: %sstill connecting after %g s of %g s: %s\n",
                     prefix().c_str(), std::chrono::duration<double>(next_status - start).count(),
                     std::chrono::duration<double>(options_.connect_timeout).count(),
                     last_error.c_str());
        std::fflush(stderr);
        while (next_status <= now) next_status += options_.status_interval;
      }
      // A pause between attempts, not synchronisation: nothing to wait on but the clock.
      std::this_thread::sleep_for(std::min<Clock::duration>(delay, deadline - now));
      delay = std::min(delay * 2, kMaxRetryDelay);
      // An attempt begun at the deadline could only time out, and "no answer" would then
      // hide the real reason (say, a refused connection) of the attempts before it.
      if (Clock::now() >= deadline) give_up();
    }
  }

  // One attempt: connect and handshake. False (with last_error) when it is worth retrying;
  // throws when the server answered and refused us.
  bool try_connect_locked(Clock::time_point deadline, std::string& last_error) {
    disconnect_locked();
    error_code ec;
    tcp::resolver resolver(io_);
    const auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), ec);
    if (ec) {
      last_error = "cannot resolve '" + options_.host + "': " + ec.message();
      return false;
    }
    bool done = false;
    asio::async_connect(socket_, endpoints, [&](const error_code& e, const tcp::endpoint&) {
      ec = e;
      done = true;
    });
    Io io = run_until(done, deadline) ? (ec ? Io::kFailed : Io::kOk) : Io::kTimedOut;
    if (io == Io::kOk) {
      socket_.set_option(tcp::no_delay(true), ec);
      io = write_locked(
          p::encode_request(p::HandshakeRequest{p::kMagic, p::kVersion, options_.token}), deadline,
          ec);
    }
    p::Frame frame;
    if (io == Io::kOk) io = read_locked(deadline, frame, ec);
    if (io != Io::kOk) {
      last_error = io == Io::kTimedOut ? "no answer from " + address_
                   : io == Io::kClosed ? "the server closed the connection during the handshake"
                   : ec == asio::error::connection_refused
                       ? "connection refused by " + address_ + " (nothing listens there yet)"
                       : ec.message() + " (" + address_ + ")";
      disconnect_locked();
      return false;
    }
    p::Response reply;
    try {
      reply = p::decode_response(frame);
    } catch (const p::ProtocolError& e) {
      disconnect_locked();
      throw CommError(prefix() + "malformed handshake reply: " + e.what());
    }
    if (reply.kind == p::Reply::kOk) return true;
    disconnect_locked();
    throw CommError(prefix() +
                    (reply.kind == p::Reply::kError ? reply.text : "unexpected handshake reply"));
  }

  Io write_locked(const std::string& frame, Clock::time_point deadline, error_code& ec) {
    bool done = false;
    asio::async_write(socket_, asio::buffer(frame), [&](const error_code& e, std::size_t) {
      ec = e;
      done = true;
    });
    if (!run_until(done, deadline)) return Io::kTimedOut;
    return classify(ec);
  }

  Io read_locked(Clock::time_point deadline, p::Frame& frame, error_code& ec) {
    for (;;) {
      if (auto next = parser_.next()) {
        frame = std::move(*next);
        return Io::kOk;
      }
      bool done = false;
      std::size_t n = 0;
      socket_.async_read_some(asio::buffer(read_buf_), [&](const error_code& e, std::size_t k) {
        ec = e;
        n = k;
        done = true;
      });
      if (!run_until(done, deadline)) return Io::kTimedOut;
      if (const Io io = classify(ec); io != Io::kOk) return io;
      parser_.feed(read_buf_.data(), n);
    }
  }

  static Io classify(const error_code& ec) {
    if (!ec) return Io::kOk;
    if (ec == asio::error::eof || ec == asio::error::connection_reset ||
        ec == asio::error::broken_pipe) {
      return Io::kClosed;
    }
    return Io::kFailed;
  }

  // Runs io_ until `done` or the deadline. On the deadline it closes the socket, so the
  // pending operation completes (aborted) while its buffers still exist, and returns false.
  bool run_until(const bool& done, Clock::time_point deadline) {
    io_.restart();
    while (!done) {
      if (io_.run_one_until(deadline) == 0 && !done) {
        disconnect_locked();
        io_.restart();
        io_.run();
        return false;
      }
    }
    return true;
  }

  void disconnect_locked() {
    error_code ignored;
    socket_.close(ignored);
    parser_ = p::FrameParser();
  }

  const TcpStoreOptions options_;
  const std::string address_;  // "host:port"
  std::mutex mutex_;           // guards everything below: one call at a time
  asio::io_context io_;
  tcp::socket socket_{io_};
  p::FrameParser parser_;
  std::vector<char> read_buf_;
};

TcpStore::TcpStore(TcpStoreOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

TcpStore::TcpStore(std::string host, std::uint16_t port, std::string token,
                   std::chrono::milliseconds timeout)
    : TcpStore(TcpStoreOptions{std::move(host), port, std::move(token), timeout, timeout}) {}

TcpStore::~TcpStore() = default;

const std::string& TcpStore::address() const { return impl_->address(); }

void TcpStore::set(const std::string& key, const std::string& value) {
  const std::string what = describe("set", {key});
  impl_->expect(impl_->call(p::SetRequest{key, value}, what), p::Reply::kOk, what);
}

std::optional<std::string> TcpStore::try_get(const std::string& key) {
  const std::string what = describe("try_get", {key});
  p::Response reply = impl_->call(p::TryGetRequest{key}, what);
  if (reply.kind == p::Reply::kNotFound) return std::nullopt;
  impl_->expect(reply, p::Reply::kValue, what);
  return std::move(reply.text);
}

std::string TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const std::string what = describe("get", {key});
  timeout = clamp_timeout(timeout);
  const auto timeout_ms = static_cast<std::uint64_t>(timeout.count());
  p::Response reply = impl_->call(p::GetRequest{key, timeout_ms}, what, timeout);
  if (reply.kind == p::Reply::kTimedOut) impl_->throw_keys_timeout(reply, timeout);
  impl_->expect(reply, p::Reply::kValue, what);
  return std::move(reply.text);
}

std::int64_t TcpStore::add(const std::string& key, std::int64_t delta) {
  const std::string what = describe("add", {key});
  const p::Response reply = impl_->call(p::AddRequest{key, delta}, what);
  impl_->expect(reply, p::Reply::kCounter, what);
  return reply.number;
}

std::string TcpStore::compare_set(const std::string& key, const std::string& expected,
                                  const std::string& desired) {
  const std::string what = describe("compare_set", {key});
  p::Response reply = impl_->call(p::CompareSetRequest{key, expected, desired}, what);
  impl_->expect(reply, p::Reply::kValue, what);
  return std::move(reply.text);
}

bool TcpStore::delete_key(const std::string& key) {
  const std::string what = describe("delete", {key});
  const p::Response reply = impl_->call(p::DeleteRequest{key}, what);
  impl_->expect(reply, p::Reply::kDeleted, what);
  return reply.number != 0;
}

void TcpStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const std::string what = describe("wait", keys);
  timeout = clamp_timeout(timeout);
  const auto timeout_ms = static_cast<std::uint64_t>(timeout.count());
  const p::Response reply = impl_->call(p::WaitRequest{keys, timeout_ms}, what, timeout);
  if (reply.kind == p::Reply::kTimedOut) impl_->throw_keys_timeout(reply, timeout);
  impl_->expect(reply, p::Reply::kOk, what);
}

}  // namespace zt::comm
