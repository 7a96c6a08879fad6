// The Store contract, written once and run against both implementations: MemoryStore (ranks
// as threads) and TcpStore talking to a TcpStoreServer on 127.0.0.1.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/store/memory_store.h"
#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kLongTimeout = 20s;  // only reached when the code under test is broken

// Every client is the one in-process store.
class MemoryBackend {
 public:
  std::shared_ptr<Store> client() { return store_; }

 private:
  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
};

// Every client is a new connection to one server.
class TcpBackend {
 public:
  std::shared_ptr<Store> client() {
    TcpStoreOptions options;
    options.port = server_.port();
    options.token = "semantics-token";
    options.timeout = 10s;
    options.connect_timeout = 10s;
    return std::make_shared<TcpStore>(options);
  }

 private:
  TcpStoreServer server_{"127.0.0.1", 0, "semantics-token"};
};

template <typename Backend>
class StoreSemantics : public ::testing::Test {
 protected:
  Backend backend_;
  std::shared_ptr<Store> store_ = backend_.client();
};

struct BackendNames {
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, MemoryBackend> ? "MemoryStore" : "TcpStore";
  }
};

using Backends = ::testing::Types<MemoryBackend, TcpBackend>;
TYPED_TEST_SUITE(StoreSemantics, Backends, BackendNames);

std::chrono::milliseconds elapsed_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

TYPED_TEST(StoreSemantics, TryGetOfAnAbsentKeyIsNullopt) {
  EXPECT_EQ(this->store_->try_get("absent"), std::nullopt);
}

TYPED_TEST(StoreSemantics, SetOverwritesAndKeepsEveryByte) {
  const std::string binary("a\0b\xff\x01", 5);
  this->store_->set("k", "first");
  this->store_->set("k", binary);
  EXPECT_EQ(this->store_->try_get("k"), binary);
  this->store_->set("empty", "");
  EXPECT_EQ(this->store_->try_get("empty"), std::string());  // set, though empty
}

TYPED_TEST(StoreSemantics, GetReturnsAValueAlreadySet) {
  this->store_->set("k", "v");
  EXPECT_EQ(this->store_->get("k", 1s), "v");
}

TYPED_TEST(StoreSemantics, GetTimesOutNamingTheKey) {
  const auto start = Clock::now();
  try {
    this->store_->get("rank/3/addr", 150ms);
    FAIL() << "get of a key nobody sets returned";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'rank/3/addr'"), std::string::npos) << e.what();
  }
  EXPECT_GE(elapsed_since(start), 140ms);
  EXPECT_LT(elapsed_since(start), 5s);
  this->store_->set("after", "1");  // the store (and a TCP connection) is still usable
  EXPECT_EQ(this->store_->try_get("after"), "1");
}

TYPED_TEST(StoreSemantics, WaitTimesOutNamingOnlyTheMissingKeys) {
  this->store_->set("present", "1");
  try {
    this->store_->wait({"present", "missing"}, 100ms);
    FAIL() << "wait for a key nobody sets returned";
  } catch (const TimeoutError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'missing'"), std::string::npos) << message;
    EXPECT_EQ(message.find("'present'"), std::string::npos) << message;
  }
}

TYPED_TEST(StoreSemantics, WaitForKeysAlreadySetReturnsAtOnce) {
  this->store_->set("a", "1");
  this->store_->set("b", "2");
  this->store_->wait({"a", "b"}, 100ms);
  this->store_->wait({}, 100ms);
}

TYPED_TEST(StoreSemantics, WaitWakesWhenAnotherClientSetsTheKey) {
  auto waiter = this->backend_.client();
  auto setter = this->backend_.client();
  auto waited = std::async(std::launch::async, [&] {
    waiter->set("waiter/ready", "1");
    const auto start = Clock::now();
    waiter->wait({"go/1", "go/2"}, kLongTimeout);
    return elapsed_since(start);
  });
  setter->wait({"waiter/ready"}, kLongTimeout);
  setter->set("go/1", "x");
  setter->add("go/2", 1);
  ASSERT_EQ(waited.wait_for(kLongTimeout), std::future_status::ready);
  EXPECT_LT(waited.get(), kLongTimeout / 4);
}

TYPED_TEST(StoreSemantics, GetWakesWithTheValueAnotherClientSets) {
  auto getter = this->backend_.client();
  auto got = std::async(std::launch::async, [&] { return getter->get("later", kLongTimeout); });
  this->store_->compare_set("later", "", "value");
  ASSERT_EQ(got.wait_for(kLongTimeout), std::future_status::ready);
  EXPECT_EQ(got.get(), "value");
}

TYPED_TEST(StoreSemantics, AddStartsFromZeroAndAccumulates) {
  EXPECT_EQ(this->store_->add("counter", 5), 5);
  EXPECT_EQ(this->store_->add("counter", -7), -2);
  EXPECT_EQ(this->store_->try_get("counter"), "-2");
}

TYPED_TEST(StoreSemantics, AddOnANonCounterIsACommErrorNamingTheKey) {
  this->store_->set("text", "hello");
  try {
    this->store_->add("text", 1);
    FAIL() << "add on a non-counter succeeded";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("'text'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(this->store_->add("number", 1), 1);  // still usable afterwards
}

TYPED_TEST(StoreSemantics, AddThatWouldOverflowIsACommErrorAndKeepsTheCounter) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  this->store_->add("c", kMax);
  EXPECT_THROW(this->store_->add("c", 1), CommError);
  EXPECT_EQ(this->store_->add("c", 0), kMax);
}

TYPED_TEST(StoreSemantics, GetWithAnEndlessTimeoutWaitsForTheKey) {
  // milliseconds::max() must mean "a long time", not overflow into an instant timeout.
  auto getter = this->backend_.client();
  auto got = std::async(std::launch::async, [&] {
    getter->set("getter/ready", "1");
    return getter->get("eventually", std::chrono::milliseconds::max());
  });
  this->store_->wait({"getter/ready"}, kLongTimeout);
  this->store_->set("eventually", "here");
  ASSERT_EQ(got.wait_for(kLongTimeout), std::future_status::ready);
  EXPECT_EQ(got.get(), "here");
}

TYPED_TEST(StoreSemantics, CompareSetOnAnAbsentKeyWithEmptyExpectedCreatesIt) {
  EXPECT_EQ(this->store_->compare_set("k", "", "new"), "new");
  EXPECT_EQ(this->store_->try_get("k"), "new");
}

TYPED_TEST(StoreSemantics, CompareSetOnAnAbsentKeyWithOtherExpectedLeavesItAbsent) {
  EXPECT_EQ(this->store_->compare_set("k", "old", "new"), "");
  EXPECT_EQ(this->store_->try_get("k"), std::nullopt);
}

TYPED_TEST(StoreSemantics, CompareSetSwapsOnlyOnAMatch) {
  this->store_->set("k", "old");
  EXPECT_EQ(this->store_->compare_set("k", "wrong", "new"), "old");
  EXPECT_EQ(this->store_->try_get("k"), "old");
  EXPECT_EQ(this->store_->compare_set("k", "old", "new"), "new");
  EXPECT_EQ(this->store_->try_get("k"), "new");
}

TYPED_TEST(StoreSemantics, DeleteReportsWhetherTheKeyExisted) {
  this->store_->set("k", "v");
  EXPECT_TRUE(this->store_->delete_key("k"));
  EXPECT_EQ(this->store_->try_get("k"), std::nullopt);
  EXPECT_FALSE(this->store_->delete_key("k"));
  EXPECT_THROW(this->store_->wait({"k"}, 50ms), TimeoutError);  // waits block again
}

TYPED_TEST(StoreSemantics, SixteenConcurrentClientsCountExactly) {
  constexpr int kClients = 16;
  constexpr int kAddsPerClient = 50;
  std::vector<std::future<std::string>> seen;
  seen.reserve(kClients);
  for (int c = 0; c < kClients; ++c) {
    seen.push_back(std::async(std::launch::async, [this] {
      auto client = this->backend_.client();
      for (int i = 0; i < kAddsPerClient; ++i) client->add("counter", 1);
      // The last client to arrive opens the barrier; every client then sees the full count.
      if (client->add("arrived", 1) == kClients) client->set("all_arrived", "1");
      client->wait({"all_arrived"}, kLongTimeout);
      return *client->try_get("counter");
    }));
  }
  for (auto& s : seen) {
    ASSERT_EQ(s.wait_for(kLongTimeout), std::future_status::ready);
    EXPECT_EQ(s.get(), std::to_string(kClients * kAddsPerClient));
  }
  EXPECT_EQ(this->store_->add("counter", 0), kClients * kAddsPerClient);
}

}  // namespace
}  // namespace zt::comm
