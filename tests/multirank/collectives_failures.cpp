// Failures: a rank that throws (and so leaves) or a rank that never joins makes its peers'
// Work::wait() throw a CommError or TimeoutError naming the op, within the timeout instead
// of hanging, and later ops on the broken communicator fail at once, naming the first.
#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using Clock = std::chrono::steady_clock;
using zt::testing::run_ranks_collect;
using zt::testing::test_group;
using zt::testing::test_options;

constexpr std::chrono::milliseconds kShortTimeout{2500};

// Runs `op` expecting it to fail with a CommError whose message names `op_name`; returns
// the message.
template <typename Op>
std::string expect_comm_error(Op op, const std::string& op_name) {
  try {
    op();
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find(op_name), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << op_name << " did not fail";
  return "";
}

TEST(Failure, RankThatThrowsMakesPeersWaitThrowNamingTheOp) {
  const int n = 3;
  std::latch connected(n);
  MemoryStore store;
  const auto errors = run_ranks_collect(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group(), kShortTimeout));
    connected.count_down();
    if (rank == 1) throw std::runtime_error("rank 1 gave up");  // destroys its communicator
    connected.wait();
    std::vector<float> input(3072, 1.0f), output(1024);
    const auto start = Clock::now();
    auto work = comm->reduce_scatter(zt::testing::tensor_over(input, DType::kF32),
                                     zt::testing::tensor_over(output, DType::kF32), ReduceOp::kSum);
    expect_comm_error([&] { work->wait(); }, "reduce_scatter #1 (12 KiB f32, sum) on rank " +
                                                 std::to_string(rank) + " of 3 failed");
    EXPECT_LT(Clock::now() - start, kShortTimeout + std::chrono::seconds(2));
    // The communicator is broken now: the next op fails without touching the network.
    const std::string broken = expect_comm_error([&] { comm->barrier()->wait(); }, "barrier #2");
    EXPECT_NE(broken.find("communicator is broken after reduce_scatter #1"), std::string::npos)
        << broken;
  });
  ASSERT_TRUE(errors[1]);
  EXPECT_THROW(std::rethrow_exception(errors[1]), std::runtime_error);
  EXPECT_FALSE(errors[0]);
  EXPECT_FALSE(errors[2]);
}

TEST(Failure, PeerThatNeverJoinsTheOpTimesOutNamingIt) {
  const int n = 2;
  std::latch rank0_done(1);
  MemoryStore store;
  const auto errors = run_ranks_collect(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group(), kShortTimeout));
    if (rank == 1) {  // stays connected but never submits the all_reduce
      rank0_done.wait();
      return;
    }
    std::vector<float> data(1 << 16, 1.0f);
    const auto start = Clock::now();
    auto work = comm->all_reduce(zt::testing::tensor_over(data, DType::kF32), ReduceOp::kSum);
    try {
      work->wait();
      ADD_FAILURE() << "all_reduce completed with a peer that never joined";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("all_reduce #1 (256 KiB f32, sum) on rank 0 of 2"),
                std::string::npos)
          << e.what();
    }
    const auto elapsed = Clock::now() - start;
    EXPECT_GE(elapsed, kShortTimeout - std::chrono::milliseconds(100));
    EXPECT_LT(elapsed, kShortTimeout + std::chrono::seconds(2));
    rank0_done.count_down();
  });
  EXPECT_FALSE(errors[0]);
  EXPECT_FALSE(errors[1]);
}

TEST(Failure, RendezvousWithAMissingRankTimesOutNamingTheGroup) {
  MemoryStore store;
  const auto start = Clock::now();
  try {
    create_cpu_communicator(store, 0, 2,
                            test_options(test_group(), std::chrono::milliseconds(500)));
    ADD_FAILURE() << "rendezvous completed without rank 1";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 of 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(test_group()), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace zt::comm
