// reduce_scatter over real Gloo TCP on 127.0.0.1: shards follow shard_range (uneven counts
// too), each rank sends exactly the (n-1)/n it must, bf16 stays within its tolerance, and
// tiny segments (many per chunk, lanes reused) neither deadlock nor mix up data.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/memory_tracker.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::count_mismatches;
using zt::testing::exact;
using zt::testing::run_ranks;
using zt::testing::test_group;
using zt::testing::test_options;

double integer_sum(int n, std::int64_t i) {
  double sum = 0;
  for (int r = 0; r < n; ++r) sum += zt::testing::integer_pattern(r, i);
  return sum;
}

// Runs one f32 sum reduce-scatter of `count` elements and checks this rank's shard.
void check_f32_reduce_scatter(Communicator& comm, std::int64_t count) {
  const int n = comm.world_size();
  const int rank = comm.rank();
  const ShardRange own = shard_range(count, n, rank);
  auto input = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
  std::vector<float> output(static_cast<std::size_t>(own.count), -1.0f);
  comm.reduce_scatter(zt::testing::tensor_over(input, DType::kF32),
                      zt::testing::tensor_over(output, DType::kF32), ReduceOp::kSum)
      ->wait();
  auto actual = [&](std::int64_t i) { return output[static_cast<std::size_t>(i)]; };
  auto expected = [&](std::int64_t i) { return integer_sum(n, own.offset + i); };
  EXPECT_EQ(count_mismatches(own.count, actual, expected, exact(),
                             "count " + std::to_string(count) + " rank " + std::to_string(rank)),
            0);
  // The input is left as it was.
  EXPECT_EQ(input, zt::testing::f32_values(rank, count, zt::testing::integer_pattern));
}

TEST(ShardRange, FirstCountModNRanksGetOneMore) {
  EXPECT_EQ(shard_range(10, 4, 0).count, 3);
  EXPECT_EQ(shard_range(10, 4, 1).offset, 3);
  EXPECT_EQ(shard_range(10, 4, 2).offset, 6);
  EXPECT_EQ(shard_range(10, 4, 2).count, 2);
  EXPECT_EQ(shard_range(10, 4, 3).offset, 8);
  EXPECT_EQ(shard_range(2, 4, 3).count, 0);
  EXPECT_EQ(shard_range(2, 4, 3).offset, 2);
}

TEST(ReduceScatter, UnevenCountsFollowShardRangeAtWorldSizes2To4) {
  for (int n : {2, 3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      for (std::int64_t count : {0, 1, 2, 3, 10, 1003, 262147})
        check_f32_reduce_scatter(*comm, count);
    });
  }
}

TEST(ReduceScatter, OddWorldSizeMovesNMinusOneOverN) {
  const int n = 3;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    const std::int64_t divisible = 3000;
    check_f32_reduce_scatter(*comm, divisible);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kReduceScatter),
              static_cast<std::uint64_t>((n - 1) * divisible / n * 4));
    // Uneven: every chunk but this rank's own shard.
    const std::int64_t uneven = 3001;
    check_f32_reduce_scatter(*comm, uneven);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kReduceScatter),
              static_cast<std::uint64_t>((n - 1) * divisible / n * 4) +
                  4 * zt::testing::ring_reduce_scatter_elements_sent(uneven, n, rank));
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllReduce), 0u);
  });
}

TEST(ReduceScatter, ManyTinySegmentsPerChunkNeitherDeadlockNorMixData) {
  // One f32 per segment: hundreds of units per rank, lanes reused many times over.
  for (int n : {3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto options = test_options(test_group(std::to_string(n)), std::chrono::seconds(20));
      options.segment_bytes = 4;
      auto comm = create_cpu_communicator(store, rank, n, options);
      for (std::int64_t count : {5, 1003}) check_f32_reduce_scatter(*comm, count);
    });
  }
}

TEST(ReduceScatter, Bf16AvgStaysWithinOneRoundingPerHop) {
  const int n = 4;
  const std::int64_t count = 40001;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    const ShardRange own = shard_range(count, n, rank);
    auto input = zt::testing::bf16_values(rank, count);
    std::vector<std::uint16_t> output(static_cast<std::size_t>(own.count));
    comm->reduce_scatter(zt::testing::tensor_over(input, DType::kBF16),
                         zt::testing::tensor_over(output, DType::kBF16), ReduceOp::kAvg)
        ->wait();
    auto actual = [&](std::int64_t i) {
      return bf16_bits_to_f32(output[static_cast<std::size_t>(i)]);
    };
    auto expected = [&](std::int64_t i) {
      double sum = 0;
      for (int r = 0; r < n; ++r) sum += zt::testing::fractional_pattern(r, own.offset + i);
      return sum / n;
    };
    // Note [bf16 tolerance] in collectives_all_reduce.cpp: n u sum |x_r|, divided by n.
    auto tolerance = [&](std::int64_t i) {
      double magnitude = 0;
      for (int r = 0; r < n; ++r)
        magnitude += std::fabs(zt::testing::fractional_pattern(r, own.offset + i));
      return std::ldexp(1.0, -8) * magnitude;
    };
    EXPECT_EQ(count_mismatches(own.count, actual, expected, tolerance, "bf16 avg"), 0);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kReduceScatter),
              2 * zt::testing::ring_reduce_scatter_elements_sent(count, n, rank));
  });
}

TEST(ReduceScatter, OutputMayBeTheInputsOwnShard) {
  const int n = 3;
  const std::int64_t count = 1000;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    const ShardRange own = shard_range(count, n, rank);
    auto data = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
    Tensor whole = zt::testing::tensor_over(data, DType::kF32);
    comm->reduce_scatter(whole, whole.view(own.offset, Shape{own.count}), ReduceOp::kMax)->wait();
    auto actual = [&](std::int64_t i) { return data[static_cast<std::size_t>(own.offset + i)]; };
    auto expected = [&](std::int64_t i) {
      float best = zt::testing::integer_pattern(0, own.offset + i);
      for (int r = 1; r < n; ++r)
        best = std::max(best, zt::testing::integer_pattern(r, own.offset + i));
      return static_cast<double>(best);
    };
    EXPECT_EQ(count_mismatches(own.count, actual, expected, exact(), "in place max"), 0);
  });
}

TEST(ReduceScatter, SixtyFourMiBAtFourRanksUsesBoundedScratch) {
  const int n = 4;
  const std::int64_t count = std::int64_t{16} << 20;  // 64 MiB of f32
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto options = test_options(test_group());
    options.memory_tracker = &tracker;
    auto comm = create_cpu_communicator(store, rank, n, options);
    check_f32_reduce_scatter(*comm, count);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kReduceScatter),
              static_cast<std::uint64_t>(count / n * (n - 1) * 4));
    // Scratch is a fixed number of segments (4n + 4, Note [Scratch lanes]), not a chunk.
    const std::int64_t scratch = tracker.peak_bytes(MemoryCategory::kCommBuffers);
    EXPECT_GT(scratch, 0);
    EXPECT_LE(scratch, static_cast<std::int64_t>((4 * n + 4) * options.segment_bytes));
    // A second op of the same size reuses it.
    check_f32_reduce_scatter(*comm, count);
    EXPECT_EQ(tracker.peak_bytes(MemoryCategory::kCommBuffers), scratch);
  });
}

}  // namespace
}  // namespace zt::comm
