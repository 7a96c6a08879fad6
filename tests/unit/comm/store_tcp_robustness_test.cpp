// TcpStoreServer against clients that break the protocol, driven through raw POSIX sockets:
// each bad connection is closed, and only it; a well-behaved client keeps working.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>

#include "comm/store/store_protocol.h"
#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"

namespace zt::comm {
namespace {

using namespace std::chrono_literals;
namespace p = protocol;

const std::string kToken = "robustness-token";
constexpr int kPollMs = 10000;  // a bound on every read; only reached when the server is wrong

// A blocking loopback socket that says whether the server closed it.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  // False when the server has already closed the connection (which a bad frame may cause).
  bool send_bytes(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next reply frame, or nullopt if the connection ends (or kPollMs pass) first.
  std::optional<p::Frame> read_frame() {
    for (int reads = 0; reads < 100000; ++reads) {
      if (auto frame = parser_.next()) return frame;
      char buf[4096];
      const ssize_t n = read_some(buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      parser_.feed(buf, static_cast<std::size_t>(n));
    }
    return std::nullopt;
  }

  // Whether the server closes the connection (EOF or reset) within kPollMs, reading and
  // discarding whatever it sends first.
  bool closed_by_server() {
    for (int reads = 0; reads < 100000; ++reads) {
      char buf[4096];
      const ssize_t n = read_some(buf, sizeof buf);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      if (n < 0) return false;  // timed out: still open
    }
    return false;
  }

  bool handshake(const std::string& token = kToken) {
    if (!send_bytes(p::encode_request(p::HandshakeRequest{p::kMagic, p::kVersion, token}))) {
      return false;
    }
    const auto reply = read_frame();
    return reply && reply->op == static_cast<std::uint8_t>(p::Reply::kOk);
  }

 private:
  ssize_t read_some(char* buf, std::size_t size) {
    pollfd waiting{fd_, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, kPollMs);
    if (ready <= 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    return ::recv(fd_, buf, size, 0);
  }

  int fd_;
  bool connected_ = false;
  p::FrameParser parser_;
};

std::string le32(std::uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return s;
}

class TcpStoreServerRobustness : public ::testing::Test {
 protected:
  TcpStoreOptions good_options() {
    TcpStoreOptions options;
    options.port = server_.port();
    options.token = kToken;
    options.timeout = 10s;
    options.connect_timeout = 10s;
    return options;
  }

  // The well-behaved client, connected before the bad one, still gets answers.
  void expect_good_client_works() {
    good_.set("still", "working");
    EXPECT_EQ(good_.get("still", 1s), "working");
    EXPECT_EQ(good_.add("count", 1), ++count_);
    TcpStore fresh(good_options());  // and new connections are accepted
    EXPECT_EQ(fresh.try_get("still"), "working");
  }

  TcpStoreServer server_{TcpStoreServerOptions{"127.0.0.1", 0, kToken, 300ms}};
  TcpStore good_{good_options()};
  std::int64_t count_ = 0;
};

TEST_F(TcpStoreServerRobustness, OversizedLengthPrefixBeforeTheHandshakeClosesOnlyIt) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.connected());
  raw.send_bytes(le32(0xFFFFFFFF) + "x");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, FrameLargerThanAHandshakeBeforeTheHandshakeClosesIt) {
  // Legal after the handshake, but a stranger may not make the server buffer large frames.
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.connected());
  raw.send_bytes(le32(static_cast<std::uint32_t>(p::kMaxHandshakePayloadBytes + 1)) + "\x01");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, OversizedLengthPrefixAfterTheHandshakeClosesOnlyIt) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.handshake());
  raw.send_bytes(le32(static_cast<std::uint32_t>(p::kMaxPayloadBytes + 1)) + "\x10");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, GarbageBytesCloseOnlyThatConnection) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.connected());
  raw.send_bytes("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, UnknownOpClosesOnlyThatConnection) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.handshake());
  raw.send_bytes(le32(0) + "\x42");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, TruncatedFieldClosesOnlyThatConnection) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.handshake());
  // A set whose key claims 100 bytes in a 6-byte payload.
  raw.send_bytes(le32(6) + "\x10" + le32(100) + "ab");
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, RequestBeforeTheHandshakeClosesTheConnection) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.connected());
  raw.send_bytes(p::encode_request(p::SetRequest{"sneaky", "value"}));
  EXPECT_TRUE(raw.closed_by_server());
  EXPECT_EQ(good_.try_get("sneaky"), std::nullopt);
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, BadMagicIsRefusedWithAReasonThenClosed) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.send_bytes(p::encode_request(p::HandshakeRequest{0x12345678, 1, kToken})));
  const auto reply = raw.read_frame();
  ASSERT_TRUE(reply.has_value());
  ASSERT_EQ(reply->op, static_cast<std::uint8_t>(p::Reply::kError));
  EXPECT_NE(p::decode_response(*reply).text.find("bad magic"), std::string::npos);
  EXPECT_TRUE(raw.closed_by_server());
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, SilentConnectionIsDroppedAfterTheHandshakeTimeout) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.connected());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(raw.closed_by_server());  // the fixture's server allows 300 ms
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  expect_good_client_works();
}

TEST_F(TcpStoreServerRobustness, RequestSentWhileAWaitIsPendingClosesTheConnection) {
  RawConnection raw(server_.port());
  ASSERT_TRUE(raw.handshake());
  raw.send_bytes(p::encode_request(p::WaitRequest{{"never"}, 60000}) +
                 p::encode_request(p::TryGetRequest{"never"}));
  EXPECT_TRUE(raw.closed_by_server());
  EXPECT_EQ(server_.waiting_requests(), 0u);  // the dropped wait does not linger
  expect_good_client_works();
}

// The server's log names the peer it refused or dropped, so an operator can find the
// stranger; the job's own client is undisturbed meanwhile.
TEST_F(TcpStoreServerRobustness, WrongTokenAndGarbageAreLoggedNamingThePeer) {
  ::testing::internal::CaptureStderr();
  bool refused = false;
  try {
    TcpStoreOptions stranger = good_options();
    stranger.token = "not-the-token";
    TcpStore client(stranger);
  } catch (const CommError&) {
    refused = true;
  }
  RawConnection raw(server_.port());
  const bool sent = raw.send_bytes(std::string("\x01\x00\x00\x00\xff garbage", 13));
  const bool closed = raw.closed_by_server();
  expect_good_client_works();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(refused) << "a client with the wrong token was let in";
  EXPECT_TRUE(sent);
  EXPECT_TRUE(closed);
  EXPECT_NE(log.find("zerotrain: store server: refused connection from 127.0.0.1:"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("wrong token"), std::string::npos) << log;
  EXPECT_NE(log.find("zerotrain: store server: dropped connection from 127.0.0.1:"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace zt::comm
