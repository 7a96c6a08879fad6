// Stream semantics over real Gloo, ranks as threads: a collective runs only after the work
// its rank's compute stream had when the op was submitted (a CpuWorkerStream producer),
// and group() submits several ops that each complete with their own Work.
#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <stdexcept>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/error.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"
#include "tests/support/worker_compute_context.h"

namespace zt::comm {
namespace {

using zt::testing::run_ranks;
using zt::testing::tensor_over;
using zt::testing::test_group;
using zt::testing::test_options;

TEST(StreamOrder, AllReduceWaitsForWorkPendingOnTheComputeStream) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    zt::testing::WorkerComputeContext device;
    CommOptions options = test_options(test_group());
    options.device = &device;
    auto comm = create_communicator(store, rank, n, options);
    std::vector<float> data(1000, 0.0f);
    std::latch produce(1);
    device.worker().enqueue([&] {
      produce.wait();
      std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
    });
    auto work = comm->all_reduce(tensor_over(data, DType::kF32), ReduceOp::kSum);
    // The producer has not run, so neither may the op: a bounded wait must time out.
    EXPECT_THROW(work->wait(std::chrono::milliseconds(200)), TimeoutError);
    produce.count_down();
    work->wait();
    EXPECT_EQ(data, std::vector<float>(1000, 3.0f));  // 1 + 2: both producers' values
  });
}

TEST(StreamOrder, GroupedOpsOnGlooEachCompleteWithTheirOwnResult) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_communicator(store, rank, n, test_options(test_group()));
    std::vector<float> summed(8, static_cast<float>(rank + 1));
    std::vector<float> full(8, static_cast<float>(10 * (rank + 1))), shard(4, 0.0f);
    std::shared_ptr<Work> all_reduce, reduce_scatter;
    comm->group([&] {
      all_reduce = comm->all_reduce(tensor_over(summed, DType::kF32), ReduceOp::kSum);
      reduce_scatter = comm->reduce_scatter(tensor_over(full, DType::kF32),
                                            tensor_over(shard, DType::kF32), ReduceOp::kMax);
    });
    all_reduce->wait();
    reduce_scatter->wait();
    EXPECT_EQ(summed, std::vector<float>(8, 3.0f));
    EXPECT_EQ(shard, std::vector<float>(4, 20.0f));
    // An op submitted before submit_ops throws still runs (the peer's matches it).
    std::vector<float> more(4, 1.0f);
    std::shared_ptr<Work> before_throw;
    EXPECT_THROW(comm->group([&] {
      before_throw = comm->all_reduce(tensor_over(more, DType::kF32), ReduceOp::kSum);
      throw std::runtime_error("a bucket failed to build");
    }),
                 std::runtime_error);
    before_throw->wait();
    EXPECT_EQ(more, std::vector<float>(4, 2.0f));
  });
}

TEST(StreamOrder, LanesBoundToTheCpuContextEachReduce) {
  const int n = 2;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto device = make_cpu_device_context();
    CommOptions options = test_options(test_group());
    options.device = device.get();
    const OwnedCommLanes owned = create_comm_lanes(store, rank, n, options);
    const CommLanes lanes = owned.lanes();
    for (Communicator* lane : {&lanes.control, &lanes.parameters, &lanes.gradients}) {
      std::vector<float> data(5, static_cast<float>(rank + 1));
      lane->all_reduce(tensor_over(data, DType::kF32), ReduceOp::kAvg)->wait();
      EXPECT_EQ(data, std::vector<float>(5, 1.5f));
    }
    EXPECT_EQ(lanes.counters().ops[static_cast<std::size_t>(CollectiveKind::kAllReduce)], 3u);
  });
}

}  // namespace
}  // namespace zt::comm
