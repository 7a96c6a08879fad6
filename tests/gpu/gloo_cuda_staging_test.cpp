// Gloo with CUDA tensors: two ranks as threads share one GPU (which NCCL refuses), each with
// its own CUDA context; the collectives stage through pinned host memory and give the same
// results and byte counts as on host tensors. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/device/device_context.h"
#include "tests/gpu/comm_gpu_test_util.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using gpu_test::small_integers;
using gpu_test::to_device;
using gpu_test::to_host;

TEST(GlooCudaStaging, TwoRanksOnOneGpuMatchTheHostResults) {
  ZT_SKIP_WITHOUT_GPU();
  const int n = 2;
  const std::int64_t count = 1001;  // uneven shards: 501 and 500
  MemoryStore store;
  zt::testing::run_ranks(n, [&](int rank) {
    auto device = make_device_context(Device::cuda(0));
    CommOptions options;
    options.device = device.get();
    options.group_name = "gloo-cuda";
    options.timeout = std::chrono::seconds(60);
    auto comm = create_communicator(store, rank, n, options);
    const std::vector<float> zero = small_integers(count, 0), one = small_integers(count, 1);
    for (const DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)));
      Tensor summed = to_device(*device, small_integers(count, rank), dtype);
      comm->all_reduce(summed, ReduceOp::kSum)->wait();
      const std::vector<float> sums = to_host(*device, summed);
      for (std::int64_t i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        ASSERT_EQ(sums[k], zero[k] + one[k]) << "element " << i;
      }
      const ShardRange mine = shard_range(count, n, rank);
      Tensor full = to_device(*device, small_integers(count, rank), dtype);
      Tensor shard = full.view(mine.offset, Shape{mine.count});  // in place
      comm->reduce_scatter(full, shard, ReduceOp::kMax)->wait();
      const std::vector<float> maxima = to_host(*device, shard);
      for (std::int64_t i = 0; i < mine.count; ++i) {
        const auto k = static_cast<std::size_t>(mine.offset + i);
        ASSERT_EQ(maxima[static_cast<std::size_t>(i)], std::max(zero[k], one[k]));
      }
      comm->all_gather(shard, full)->wait();
      const std::vector<float> gathered = to_host(*device, full);
      for (std::int64_t i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        ASSERT_EQ(gathered[k], std::max(zero[k], one[k]));
      }
      Tensor broadcast = to_device(*device, small_integers(count, rank), dtype);
      comm->broadcast(broadcast, 1)->wait();
      EXPECT_EQ(to_host(*device, broadcast), one);
    }
    comm->barrier()->wait();
    // Staging changes nothing on the wire: the ring's (n-1)/n per reduce-scatter.
    EXPECT_EQ(
        comm->counters().bytes(CollectiveKind::kReduceScatter),
        static_cast<std::uint64_t>(count - shard_range(count, n, rank).count) * (4u + 2u + 2u));
  });
}

}  // namespace
}  // namespace zt::comm
