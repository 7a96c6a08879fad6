// What the store says while ranks gather: the server's status (missing keys, keys that
// parked requests wait for), and a client that cannot connect naming why, every interval.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kToken = "status-test-token";

TcpStoreOptions client_options(std::uint16_t port) {
  TcpStoreOptions options;
  options.port = port;
  options.token = kToken;
  options.timeout = 10s;
  options.connect_timeout = 10s;
  return options;
}

std::uint16_t recently_free_port() { return TcpStoreServer("127.0.0.1", 0, kToken).port(); }

TEST(TcpStoreServerStatus, NamesMissingKeysAndTheKeysParkedRequestsWaitFor) {
  TcpStoreServer server("127.0.0.1", 0, kToken);
  TcpStore setter(client_options(server.port()));
  setter.set("joined/0", "here");
  auto waiter = std::async(std::launch::async, [&] {
    TcpStore store(client_options(server.port()));
    store.wait({"gloo/world/1"}, 20s);
  });
  const auto deadline = Clock::now() + 20s;
  while (server.waiting_requests() != 1 && Clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(server.waiting_requests(), 1u);

  const auto status = server.status({"joined/0", "joined/1", "joined/2"});
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->missing, (std::vector<std::string>{"joined/1", "joined/2"}));
  EXPECT_EQ(status->awaited_keys, std::vector<std::string>{"gloo/world/1"});

  setter.set("gloo/world/1", "address");
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready);
  waiter.get();
  const auto after = server.status({"joined/0"});
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->missing.empty());
  EXPECT_TRUE(after->awaited_keys.empty());
}

TEST(TcpStore, RefusedConnectionIsNamedAsRefusedByTheAddress) {
  TcpStoreOptions options = client_options(recently_free_port());
  options.connect_timeout = 300ms;
  options.status_interval = 0ms;
  const std::string address = "127.0.0.1:" + std::to_string(options.port);
  try {
    TcpStore store(options);
    FAIL() << "connected to a port nobody listens on";
  } catch (const TimeoutError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("last error: connection refused by " + address), std::string::npos)
        << message;
    EXPECT_EQ(message.find("no answer"), std::string::npos) << message;
  }
}

TEST(TcpStore, SlowConnectSaysWhyEveryStatusInterval) {
  TcpStoreOptions options = client_options(recently_free_port());
  options.connect_timeout = 700ms;
  options.status_interval = 200ms;
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(TcpStore store(options), TimeoutError);
  const std::string log = ::testing::internal::GetCapturedStderr();
  const std::string line =
      "zerotrain: store 127.0.0.1:" + std::to_string(options.port) + ": still connecting after ";
  std::size_t lines = 0;
  for (auto at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++lines;
  EXPECT_GE(lines, 2u) << log;  // at ~200 and ~400 ms (and maybe ~600)
  EXPECT_LE(lines, 4u) << log;
  EXPECT_NE(log.find("of 0.7 s: connection refused by 127.0.0.1:"), std::string::npos) << log;
}

}  // namespace
}  // namespace zt::comm
