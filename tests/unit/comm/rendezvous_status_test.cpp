// What a rank says while it waits: the rendezvous keys name ranks, the rendezvous store
// says every interval which ranks it waits for and names them when it gives up, and a
// Work says which collective it waits in.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "comm/gloo/rendezvous_status_store.h"
#include "comm/rendezvous_keys.h"
#include "comm/store/memory_store.h"
#include "comm/work.h"
#include "core/error.h"

namespace zt::comm {
namespace {

using namespace std::chrono_literals;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(RendezvousKeys, PerRankKeysNameTheirRank) {
  const std::string prefix = rendezvous_key_prefix("world");
  EXPECT_EQ(prefix, "gloo/world/");
  EXPECT_EQ(joined_key(prefix, 7), "gloo/world/joined/7");
  EXPECT_EQ(rank_of_key(prefix, "gloo/world/joined/7"), 7);
  EXPECT_EQ(rank_of_key(prefix, "gloo/world/12"), 12);
  EXPECT_EQ(rank_of_key(prefix, "gloo/world/rank_1"), std::nullopt);
  EXPECT_EQ(rank_of_key(prefix, "gloo/other/1"), std::nullopt);
  EXPECT_EQ(rank_of_key(prefix, "gloo/world/"), std::nullopt);
  EXPECT_EQ(rank_of_key(prefix, "gloo/world/-1"), std::nullopt);
}

TEST(RendezvousStatusStore, SaysEachIntervalWhichRanksItWaitsForThenNamesThem) {
  MemoryStore inner;
  inner.set("gloo/world/1", "here");
  RendezvousStatusStore store(inner, "gloo/world/", 0, 100ms);
  ::testing::internal::CaptureStderr();
  std::string message;
  try {
    store.wait({"gloo/world/1", "gloo/world/2", "gloo/world/3"}, 350ms);
  } catch (const TimeoutError& e) {
    message = e.what();
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(message,
            "rank 0 waited 0.35 s (runtime.comm_timeout_s) in the rendezvous for ranks 2, 3 "
            "(store keys 'gloo/world/2', 'gloo/world/3'); did their node's launcher start?");
  const std::string line =
      "in the rendezvous, waiting for ranks 2, 3 (store keys 'gloo/world/2', 'gloo/world/3')";
  EXPECT_GE(count_of(log, line), 2u) << log;  // after ~100, ~200 and ~300 ms
  EXPECT_LE(count_of(log, line), 3u) << log;
  EXPECT_NE(log.find("zerotrain: rank 0: 0.1 s of 0.35 s in the rendezvous"), std::string::npos)
      << log;
  EXPECT_NE(log.find("zerotrain: rank 0: 0.2 s of 0.35 s in the rendezvous"), std::string::npos)
      << log;
}

TEST(RendezvousStatusStore, ReturnsAsSoonAsTheKeysArrive) {
  MemoryStore inner;
  RendezvousStatusStore store(inner, "gloo/world/", 1, 50ms);
  auto setter = std::async(std::launch::async, [&] {
    inner.wait({"gloo/world/joined/1"}, 20s);  // the waiter has begun
    inner.set("gloo/world/0", "address");
  });
  inner.set("gloo/world/joined/1", "");
  EXPECT_EQ(store.get("gloo/world/0", 20s), "address");
  setter.get();
}

TEST(Work, WaitLongerThanTheStatusIntervalSaysWhichOpItWaitsFor) {
  Work work(17, "all_reduce #17 (4 MiB f32, sum) on rank 1 of 4", 10s, 100ms);
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(work.wait(250ms), TimeoutError);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_GE(count_of(log,
                     "waiting for all_reduce #17 (4 MiB f32, sum) on rank 1 of 4; a peer "
                     "may be stopped or slow"),
            1u)
      << log;
}

TEST(Work, CompletedWorkSaysNothing) {
  Work work(1, "barrier #1 on rank 0 of 2", 10s, 1ms);
  work.mark_completed();
  ::testing::internal::CaptureStderr();
  work.wait();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace zt::comm
