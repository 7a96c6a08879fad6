// RendezvousWatch against a real store server: which ranks (on which nodes) are missing,
// a status line per interval, the verdict at the timeout, and silence once all joined.
#include "runtime/launch/rendezvous_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "comm/rendezvous_keys.h"
#include "comm/store/tcp_store.h"
#include "comm/store/tcp_store_server.h"

namespace zt::launch {
namespace {

using namespace std::chrono_literals;
using Clock = RendezvousWatch::Clock;

const std::string kToken = "watch-test-token";

class RendezvousWatchTest : public ::testing::Test {
 protected:
  void join(int rank) { client_.set(comm::joined_key("gloo/world/", rank), "10.0.0.1"); }

  comm::TcpStoreServer server_{"127.0.0.1", 0, kToken};
  comm::TcpStore client_{"127.0.0.1", server_.port(), kToken, 10s};
};

TEST_F(RendezvousWatchTest, NamesTheMissingRanksAndTheirNodesEachIntervalThenAtTheTimeout) {
  // 3 nodes of 2 ranks; node 0 and half of node 2 have joined.
  RendezvousWatch watch(server_, 6, 2, 1000ms, 3000ms);
  for (int rank : {0, 1, 5}) join(rank);
  const Clock::time_point start = *watch.next_check() - 1000ms;

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(watch.check(start + 500ms), RendezvousWatch::State::kWaiting);  // not due: silent
  EXPECT_EQ(watch.check(start + 1000ms), RendezvousWatch::State::kWaiting);
  EXPECT_EQ(watch.check(start + 2500ms), RendezvousWatch::State::kWaiting);
  const std::string lines = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines,
            "zerotrain launch: 1 s of 3 s: waiting for ranks 2, 3, 4 (nodes 1, 2) to join the "
            "rendezvous\n"
            "zerotrain launch: 2 s of 3 s: waiting for ranks 2, 3, 4 (nodes 1, 2) to join the "
            "rendezvous\n");
  EXPECT_EQ(*watch.next_check(), start + 3000ms);

  EXPECT_EQ(watch.check(start + 3000ms), RendezvousWatch::State::kTimedOut);
  EXPECT_EQ(watch.missing_ranks(), "ranks 2, 3, 4 (nodes 1, 2)");
  EXPECT_EQ(watch.timeout_message().rfind("ranks 2, 3, 4 (nodes 1, 2) did not join the rendezvous "
                                          "within 3 s (runtime.comm_timeout_s)",
                                          0),
            0u)
      << watch.timeout_message();
  EXPECT_FALSE(watch.next_check().has_value());
}

TEST_F(RendezvousWatchTest, CompletesSilentlyOnceEveryRankHasJoined) {
  RendezvousWatch watch(server_, 2, 1, 100ms, 60000ms);
  join(0);
  join(1);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(watch.check(*watch.next_check()), RendezvousWatch::State::kComplete);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(watch.missing_ranks(), "");
  EXPECT_FALSE(watch.next_check().has_value());
}

}  // namespace
}  // namespace zt::launch
