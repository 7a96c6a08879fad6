// TcpStore and TcpStoreServer beyond the shared Store contract: listening, connecting,
// tokens, waits served asynchronously, timeouts, size limits and a server that goes away.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/store/store_protocol.h"
#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kLongTimeout = 20s;  // only reached when the code under test is broken
const std::string kToken = "tcp-test-token";

TcpStoreOptions client_options(std::uint16_t port, std::string token = kToken) {
  TcpStoreOptions options;
  options.port = port;
  options.token = std::move(token);
  options.timeout = 10s;
  options.connect_timeout = 10s;
  return options;
}

std::chrono::milliseconds elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

// Polls a server counter that another thread changes; bounded, and not a sleep standing in
// for an event: it returns as soon as the condition holds.
bool eventually_waiting(const TcpStoreServer& server, std::size_t expected) {
  const auto deadline = Clock::now() + kLongTimeout;
  while (server.waiting_requests() != expected) {
    if (Clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A port that was free a moment ago: bound by a server that is then destroyed.
std::uint16_t recently_free_port() { return TcpStoreServer("127.0.0.1", 0, kToken).port(); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(TcpStoreServer, PortZeroPicksAFreePort) {
  TcpStoreServer a("127.0.0.1", 0, kToken);
  TcpStoreServer b("127.0.0.1", 0, kToken);
  EXPECT_NE(a.port(), 0);
  EXPECT_NE(a.port(), b.port());
  EXPECT_EQ(a.host(), "127.0.0.1");
}

TEST(TcpStoreServer, BusyPortIsACommErrorNamingTheAddress) {
  TcpStoreServer first("127.0.0.1", 0, kToken);
  const std::string expected = "store: cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                               ": address already in use";
  try {
    TcpStoreServer second("127.0.0.1", first.port(), kToken);
    FAIL() << "a second server listened on a busy port";
  } catch (const CommError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TEST(TcpStoreServer, WaitIsParkedWithoutBlockingOtherClients) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore waiter(client_options(server.port()));
  TcpStore other(client_options(server.port()));
  auto waited = std::async(std::launch::async, [&] {
    const auto start = Clock::now();
    waiter.wait({"late/key"}, kLongTimeout);
    return elapsed_since(start);
  });
  ASSERT_TRUE(eventually_waiting(server, 1));
  // The server keeps serving while the wait is parked.
  for (int i = 0; i < 20; ++i) other.add("unrelated", 1);
  EXPECT_EQ(other.try_get("unrelated"), "20");
  EXPECT_EQ(waited.wait_for(0s), std::future_status::timeout);
  other.set("late/key", "now");
  ASSERT_EQ(waited.wait_for(kLongTimeout), std::future_status::ready);
  EXPECT_LT(waited.get(), kLongTimeout / 4);
  EXPECT_TRUE(eventually_waiting(server, 0));
}

TEST(TcpStoreServer, WaitForSeveralKeysCompletesOnlyWhenAllAreSet) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore waiter(client_options(server.port()));
  TcpStore setter(client_options(server.port()));
  auto waited = std::async(std::launch::async, [&] { waiter.wait({"a", "b"}, kLongTimeout); });
  ASSERT_TRUE(eventually_waiting(server, 1));
  setter.set("a", "1");
  setter.delete_key("a");  // gone again before b arrives: the wait must keep waiting
  setter.set("b", "1");
  EXPECT_EQ(server.waiting_requests(), 1u);
  EXPECT_EQ(waited.wait_for(0s), std::future_status::timeout);
  setter.set("a", "2");
  ASSERT_EQ(waited.wait_for(kLongTimeout), std::future_status::ready);
  waited.get();
}

TEST(TcpStore, TimeoutMessageSaysWhatWasAwaitedFromWhom) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore store(client_options(server.port()));
  const std::string message = message_of([&] { store.wait({"rank/3/addr"}, 120ms); });
  EXPECT_EQ(message, "store 127.0.0.1:" + std::to_string(server.port()) +
                         ": timed out after 120 ms waiting for keys 'rank/3/addr' (set by "
                         "another rank that has not arrived)");
}

TEST(TcpStore, WrongTokenIsRefusedWhileOtherClientsKeepWorking) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore good(client_options(server.port()));
  good.set("before", "1");
  const auto start = Clock::now();
  try {
    TcpStore stranger(client_options(server.port(), "not-the-token"));
    FAIL() << "a client with the wrong token was let in";
  } catch (const TimeoutError& e) {
    FAIL() << "the refusal should be immediate, not a timeout: " << e.what();
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong token"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ZEROTRAIN_STORE_TOKEN"), std::string::npos);
  }
  EXPECT_LT(elapsed_since(start), 5s);  // refused at once, not retried until the deadline
  EXPECT_EQ(good.get("before", 1s), "1");
  good.set("after", "2");
  EXPECT_EQ(good.try_get("after"), "2");
}

TEST(TcpStore, TokenOfTheMaximumSizeIsAccepted) {
  const std::string token(protocol::kMaxTokenBytes, 't');
  TcpStoreServer server("127.0.0.1", 0, token);
  TcpStore store(client_options(server.port(), token));
  store.set("k", "v");
  EXPECT_EQ(store.try_get("k"), "v");
}

TEST(TcpStore, ConnectTimesOutWhenNoServerListens) {
  TcpStoreOptions options = client_options(recently_free_port());
  options.connect_timeout = 300ms;
  const auto start = Clock::now();
  try {
    TcpStore store(options);
    FAIL() << "connected to a port nobody listens on";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("store 127.0.0.1:" + std::to_string(options.port) +
                                         ": could not connect within 300 ms (is the launcher "
                                         "running?)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_GE(elapsed_since(start), 250ms);
  EXPECT_LT(elapsed_since(start), 5s);
}

TEST(TcpStore, ConnectRetriesUntilTheServerStarts) {
  const std::uint16_t port = recently_free_port();
  auto connected = std::async(std::launch::async, [port] {
    TcpStore store(client_options(port));  // refused until the server below listens
    store.set("hello", "world");
    return store.get("hello", 1s);
  });
  TcpStoreServer server("127.0.0.1", port, kToken);
  ASSERT_EQ(connected.wait_for(kLongTimeout), std::future_status::ready);
  EXPECT_EQ(connected.get(), "world");
}

TEST(TcpStore, ServerShutdownFailsAPendingWaitWithACommError) {
  auto server = std::make_unique<TcpStoreServer>("127.0.0.1", 0, kToken);
  TcpStore store(client_options(server->port()));
  auto waited = std::async(std::launch::async, [&] {
    const auto start = Clock::now();
    const std::string message = message_of([&] { store.wait({"never"}, kLongTimeout); });
    return std::make_pair(message, elapsed_since(start));
  });
  ASSERT_TRUE(eventually_waiting(*server, 1));
  server.reset();  // the destructor must not hang on a parked wait
  ASSERT_EQ(waited.wait_for(kLongTimeout), std::future_status::ready);
  const auto [message, elapsed] = waited.get();
  EXPECT_NE(message.find("closed the connection during wait('never')"), std::string::npos)
      << message;
  EXPECT_LT(elapsed, kLongTimeout / 4);
}

TEST(TcpStore, CallsAfterTheServerLeftNameTheServerAndTheOp) {
  auto server = std::make_unique<TcpStoreServer>("127.0.0.1", 0, kToken);
  const std::string address = "store 127.0.0.1:" + std::to_string(server->port());
  TcpStoreOptions options = client_options(server->port());
  options.connect_timeout = 200ms;
  TcpStore store(options);
  server.reset();
  const std::string first = message_of([&] { store.set("k", "v"); });
  EXPECT_NE(first.find(address + ": the server closed the connection during set('k')"),
            std::string::npos)
      << first;
  // The next call tries to reconnect and says that nobody answers.
  const std::string second = message_of([&] { store.set("k", "v"); });
  EXPECT_NE(second.find(address + ": could not connect within 200 ms"), std::string::npos)
      << second;
}

TEST(TcpStore, OneClientIsSafeToShareBetweenThreads) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore store(client_options(server.port()));
  constexpr int kThreads = 8;
  constexpr int kAdds = 100;
  std::vector<std::future<void>> done;
  done.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    done.push_back(std::async(std::launch::async, [&, t] {
      for (int i = 0; i < kAdds; ++i) store.add("shared", 1);
      store.set("thread/" + std::to_string(t), "done");
    }));
  }
  for (auto& d : done) {
    ASSERT_EQ(d.wait_for(kLongTimeout), std::future_status::ready);
    d.get();
  }
  EXPECT_EQ(store.add("shared", 0), kThreads * kAdds);
}

TEST(TcpStore, ValueOfTheMaximumSizeRoundTrips) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore writer(client_options(server.port()));
  TcpStore reader(client_options(server.port()));
  std::string value(protocol::kMaxValueBytes, '\0');
  for (std::size_t i = 0; i < value.size(); i += 4093) value[i] = static_cast<char>(i % 251);
  writer.set("big", value);
  EXPECT_TRUE(reader.get("big", kLongTimeout) == value);
}

TEST(TcpStore, OversizedKeyOrValueIsRejectedBeforeSending) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore store(client_options(server.port()));
  const std::string message =
      message_of([&] { store.set("big", std::string(protocol::kMaxValueBytes + 1, 'x')); });
  EXPECT_NE(message.find("set('big'): value of 67108865 bytes exceeds"), std::string::npos)
      << message;
  EXPECT_THROW(store.try_get(std::string(protocol::kMaxKeyBytes + 1, 'k')), CommError);
  store.set("small", "ok");  // nothing was sent, so the connection is intact
  EXPECT_EQ(store.try_get("small"), "ok");
}

}  // namespace
}  // namespace zt::comm
