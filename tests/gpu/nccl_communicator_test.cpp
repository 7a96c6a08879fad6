// The NCCL communicator: every collective and dtype at world size 1 on one GPU, the compute
// stream ordered before and after an op, refused host tensors, grouped ops, the flight
// record of its ops, and (with two
// GPUs) sums across ranks and the abort of a timed-out op. Skips without a GPU; builds
// without NCCL compile nothing here.
#if defined(ZT_HAVE_NCCL)

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/flight_recorder.h"
#include "comm/store/memory_store.h"
#include "core/device/device_context.h"
#include "core/error.h"
#include "tests/gpu/comm_gpu_test_util.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using gpu_test::small_integers;
using gpu_test::to_device;
using gpu_test::to_host;

constexpr DType kDtypes[] = {DType::kF32, DType::kBF16, DType::kF16};

CommOptions nccl_options(DeviceContext& device, const std::string& group,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  CommOptions options;
  options.backend = CommBackend::kNccl;
  options.device = &device;
  options.group_name = group;
  options.timeout = timeout;
  return options;
}

int visible_gpus() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

TEST(NcclWorldOfOne, EveryCollectiveAndDtypeGivesBackItsInput) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1, nccl_options(*device, "world1"));
  for (const DType dtype : kDtypes) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    for (const std::int64_t count : {std::int64_t{1}, std::int64_t{1001}}) {
      const std::vector<float> values = small_integers(count, 0);
      for (const ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        Tensor data = to_device(*device, values, dtype);
        comm->all_reduce(data, op)->wait();
        EXPECT_EQ(to_host(*device, data), values);
      }
      Tensor input = to_device(*device, values, dtype);
      Tensor output = to_device(*device, std::vector<float>(values.size(), 0.0f), dtype);
      comm->reduce_scatter(input, output, ReduceOp::kSum)->wait();
      EXPECT_EQ(to_host(*device, output), values);
      Tensor gathered = to_device(*device, std::vector<float>(values.size(), 0.0f), dtype);
      comm->all_gather(input, gathered)->wait();
      EXPECT_EQ(to_host(*device, gathered), values);
      comm->broadcast(input, 0)->wait();
      EXPECT_EQ(to_host(*device, input), values);
    }
  }
  auto barrier = comm->barrier();
  barrier->wait();
  barrier->synchronize();
  EXPECT_TRUE(barrier->is_completed());
  const CommCounters counters = comm->counters();
  EXPECT_EQ(counters.ops[static_cast<std::size_t>(CollectiveKind::kAllReduce)], 3u * 3u * 2u);
  EXPECT_EQ(counters.ops[static_cast<std::size_t>(CollectiveKind::kBarrier)], 1u);
  EXPECT_EQ(counters.bytes(CollectiveKind::kAllReduce), 0u);  // a world of one sends nothing
}

TEST(NcclWorldOfOne, ComputeStreamWorkIsOrderedBeforeAndAfterTheOp) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1, nccl_options(*device, "order"));
  Tensor data = to_device(*device, std::vector<float>(1 << 20, 0.0f), DType::kF32);
  std::vector<float> expected(1 << 20, 6.0f);
  for (int round = 0; round < 3; ++round) {
    device->ops().fill(data, 3.0f);  // on the compute stream, before the op reads it
    auto work = comm->all_reduce(data, ReduceOp::kMax);
    work->wait();                     // the compute stream waits for the op
    device->ops().scale(data, 2.0f);  // so this reads the op's result
    EXPECT_EQ(to_host(*device, data), expected);
    work->synchronize();
    EXPECT_TRUE(work->is_completed());
  }
}

TEST(NcclWorldOfOne, GroupedOpsEachCompleteWithTheirOwnResult) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1, nccl_options(*device, "group"));
  const std::vector<float> values = small_integers(333, 0);
  std::vector<Tensor> buckets;
  std::vector<Tensor> shards;
  for (int i = 0; i < 4; ++i) {
    buckets.push_back(to_device(*device, values, DType::kBF16));
    shards.push_back(to_device(*device, std::vector<float>(values.size(), 0.0f), DType::kBF16));
  }
  std::vector<std::shared_ptr<Work>> works;
  comm->group([&] {
    for (int i = 0; i < 4; ++i) {
      works.push_back(comm->reduce_scatter(buckets[i], shards[i], ReduceOp::kAvg));
    }
  });
  for (const auto& work : works) work->wait();
  for (const Tensor& shard : shards) EXPECT_EQ(to_host(*device, shard), values);
}

TEST(NcclWorldOfOne, SplitGivesAGroupThatReducesAndNoColorGivesNone) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1, nccl_options(*device, "split"));
  // The (color, key) exchange is staged through the device, then ncclCommSplit.
  auto group = comm->split(2, 0);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->world_size(), 1);
  const std::vector<float> values = small_integers(77, 0);
  const Tensor tensor = to_device(*device, values, DType::kF32);
  group->all_reduce(tensor, ReduceOp::kSum)->wait();
  EXPECT_EQ(to_host(*device, tensor), values);
  EXPECT_EQ(comm->split(kNoColor, 0), nullptr);
  comm->all_reduce(tensor, ReduceOp::kSum)->wait();  // the parent still works
  EXPECT_EQ(to_host(*device, tensor), values);
}

// Note [The flight recorder] on NCCL: every op, a group's too, is recorded at submission with
// the group and its sequence number, started once on the comm stream and completed by the
// watchdog; the words of the collective check's exchange go the same way.
TEST(NcclWorldOfOne, EveryOpIsInTheFlightRecordCompleted) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  CommOptions options = nccl_options(*device, "recorded");
  options.flight_recorder = std::make_shared<FlightRecorder>(0);
  auto comm = create_communicator(store, 0, 1, options);
  const std::vector<float> values = small_integers(64, 0);
  const Tensor a = to_device(*device, values, DType::kF32);
  const Tensor b = to_device(*device, values, DType::kBF16);
  comm->all_reduce(a, ReduceOp::kSum)->wait();
  std::vector<std::shared_ptr<Work>> works;
  comm->group([&] {
    works.push_back(comm->all_reduce(a, ReduceOp::kSum));
    works.push_back(comm->broadcast(b, 0));
  });
  for (const auto& work : works) work->wait();
  const std::vector<FlightEntry> entries = options.flight_recorder->entries();
  ASSERT_EQ(entries.size(), 3u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].group, "recorded");
    EXPECT_EQ(entries[i].state, FlightState::kCompleted) << i;
    EXPECT_GE(entries[i].started_s, entries[i].enqueued_s) << i;
    EXPECT_GE(entries[i].ended_s, entries[i].started_s) << i;
    if (i > 0) {
      EXPECT_EQ(entries[i].sequence_number, entries[i - 1].sequence_number + 1);
    }
  }
  EXPECT_EQ(entries[2].kind, CollectiveKind::kBroadcast);
  EXPECT_EQ(entries[2].dtype, DType::kBF16);
  EXPECT_EQ(entries[2].root, 0);
}

TEST(NcclWorldOfOne, HostTensorIsRefusedNamingTheDevice) {
  ZT_SKIP_WITHOUT_GPU();
  auto device = make_device_context(Device::cuda(0));
  MemoryStore store;
  auto comm = create_communicator(store, 0, 1, nccl_options(*device, "host"));
  std::vector<float> host(8, 1.0f);
  try {
    comm->all_reduce(Tensor::wrap(host.data(), Shape{8}, DType::kF32), ReduceOp::kSum);
    ADD_FAILURE() << "a host tensor was accepted by NCCL";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("the NCCL communicator moves tensors on cuda:0 only"),
              std::string::npos)
        << e.what();
  }
}

TEST(NcclTwoGpus, SumsAcrossRanksWithUnevenShards) {
  ZT_SKIP_WITHOUT_GPU();
  if (visible_gpus() < 2) GTEST_SKIP() << "needs two GPUs (NCCL refuses two ranks on one)";
  MemoryStore store;
  zt::testing::run_ranks(2, [&](int rank) {
    auto device = make_device_context(Device::cuda(rank));
    auto comm = create_communicator(store, rank, 2, nccl_options(*device, "two"));
    const std::int64_t count = 1001;  // shards of 501 and 500
    Tensor full = to_device(*device, small_integers(count, rank), DType::kF32);
    const ShardRange mine = shard_range(count, 2, rank);
    Tensor shard = to_device(*device, std::vector<float>(mine.count, 0.0f), DType::kF32);
    comm->reduce_scatter(full, shard, ReduceOp::kSum)->wait();
    const std::vector<float> zero = small_integers(count, 0), one = small_integers(count, 1);
    std::vector<float> expected;
    for (std::int64_t i = mine.offset; i < mine.offset + mine.count; ++i) {
      expected.push_back(zero[static_cast<std::size_t>(i)] + one[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(to_host(*device, shard), expected);
    Tensor gathered = to_device(*device, std::vector<float>(count, 0.0f), DType::kF32);
    comm->all_gather(shard, gathered)->wait();
    const std::vector<float> all = to_host(*device, gathered);
    for (std::int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(all[static_cast<std::size_t>(i)],
                zero[static_cast<std::size_t>(i)] + one[static_cast<std::size_t>(i)]);
    }
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kReduceScatter),
              static_cast<std::uint64_t>(count - mine.count) * 4u);
  });
}

TEST(NcclTwoGpus, PeerThatNeverJoinsTheOpTimesOutAndAbortsNamingIt) {
  ZT_SKIP_WITHOUT_GPU();
  if (visible_gpus() < 2) GTEST_SKIP() << "needs two GPUs (NCCL refuses two ranks on one)";
  MemoryStore store;
  std::latch rank0_done(1);
  zt::testing::run_ranks(2, [&](int rank) {
    auto device = make_device_context(Device::cuda(rank));
    auto comm = create_communicator(
        store, rank, 2, nccl_options(*device, "abort", std::chrono::milliseconds(3000)));
    if (rank == 1) {  // connected, but never submits the all_reduce
      rank0_done.wait();
      return;
    }
    Tensor data = to_device(*device, std::vector<float>(1 << 16, 1.0f), DType::kF32);
    auto work = comm->all_reduce(data, ReduceOp::kSum);
    work->wait();  // enqueued
    try {
      work->synchronize();
      ADD_FAILURE() << "all_reduce completed with a peer that never joined";
    } catch (const TimeoutError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("all_reduce #1 (256 KiB f32, sum) on rank 0 of 2 failed"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("NCCL communicator was aborted"), std::string::npos) << message;
    }
    try {
      comm->barrier()->wait();
      ADD_FAILURE() << "an aborted communicator ran a barrier";
    } catch (const CommError& e) {
      EXPECT_NE(std::string(e.what()).find("communicator is broken after all_reduce #1"),
                std::string::npos)
          << e.what();
    }
    rank0_done.count_down();
  });
}

}  // namespace
}  // namespace zt::comm

#endif  // ZT_HAVE_NCCL
