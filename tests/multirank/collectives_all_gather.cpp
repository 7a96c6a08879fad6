// all_gather over real Gloo TCP on 127.0.0.1: uneven shards land in rank order, in place
// works, any dtype moves as bytes, and each rank sends every shard but its right neighbour's.
#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "tests/multirank/collective_test_support.h"
#include "tests/multirank/rank_threads.h"

namespace zt::comm {
namespace {

using zt::testing::count_mismatches;
using zt::testing::exact;
using zt::testing::run_ranks;
using zt::testing::test_group;
using zt::testing::test_options;

// Element i of the gathered buffer comes from the rank whose shard holds it.
float owner_value(std::int64_t count, int n, std::int64_t i) {
  for (int r = 0; r < n; ++r) {
    const ShardRange range = shard_range(count, n, r);
    if (i < range.offset + range.count) return zt::testing::integer_pattern(r, i);
  }
  return 0;
}

void check_f32_all_gather(Communicator& comm, std::int64_t count) {
  const int n = comm.world_size();
  const int rank = comm.rank();
  const ShardRange own = shard_range(count, n, rank);
  std::vector<float> shard(static_cast<std::size_t>(own.count));
  for (std::int64_t i = 0; i < own.count; ++i) {
    shard[static_cast<std::size_t>(i)] = zt::testing::integer_pattern(rank, own.offset + i);
  }
  std::vector<float> output(static_cast<std::size_t>(count), -1000.0f);
  comm.all_gather(zt::testing::tensor_over(shard, DType::kF32),
                  zt::testing::tensor_over(output, DType::kF32))
      ->wait();
  auto actual = [&](std::int64_t i) { return output[static_cast<std::size_t>(i)]; };
  auto expected = [&](std::int64_t i) { return owner_value(count, n, i); };
  EXPECT_EQ(count_mismatches(count, actual, expected, exact(),
                             "count " + std::to_string(count) + " rank " + std::to_string(rank)),
            0);
}

TEST(AllGather, UnevenShardsLandInRankOrderAtWorldSizes2To4) {
  for (int n : {2, 3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      for (std::int64_t count : {0, 1, 2, 3, 10, 1003, 262147}) check_f32_all_gather(*comm, count);
    });
  }
}

TEST(AllGather, MovesNMinusOneOverNOfTheOutput) {
  for (int n : {3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      const std::int64_t divisible = 1200;
      check_f32_all_gather(*comm, divisible);
      EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllGather),
                static_cast<std::uint64_t>((n - 1) * divisible / n * 4));
      const std::int64_t uneven = 1202;
      check_f32_all_gather(*comm, uneven);
      EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllGather),
                static_cast<std::uint64_t>((n - 1) * divisible / n * 4) +
                    4 * zt::testing::ring_all_gather_elements_sent(uneven, n, rank));
    });
  }
}

TEST(AllGather, ManyTinySegmentsKeepTheirPlaces) {
  const int n = 4;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto options = test_options(test_group(), std::chrono::seconds(20));
    options.segment_bytes = 8;
    auto comm = create_cpu_communicator(store, rank, n, options);
    for (std::int64_t count : {7, 1003}) check_f32_all_gather(*comm, count);
  });
}

TEST(AllGather, InputMayBeTheOutputsOwnShard) {
  const int n = 3;
  const std::int64_t count = 1001;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    const ShardRange own = shard_range(count, n, rank);
    std::vector<float> data(static_cast<std::size_t>(count), -1000.0f);
    for (std::int64_t i = 0; i < own.count; ++i) {
      data[static_cast<std::size_t>(own.offset + i)] =
          zt::testing::integer_pattern(rank, own.offset + i);
    }
    Tensor whole = zt::testing::tensor_over(data, DType::kF32);
    comm->all_gather(whole.view(own.offset, Shape{own.count}), whole)->wait();
    auto actual = [&](std::int64_t i) { return data[static_cast<std::size_t>(i)]; };
    auto expected = [&](std::int64_t i) { return owner_value(count, n, i); };
    EXPECT_EQ(count_mismatches(count, actual, expected, exact(), "in place"), 0);
  });
}

TEST(AllGather, Bf16ShardsArriveBitForBit) {
  const int n = 4;
  const std::int64_t count = 100003;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    const ShardRange own = shard_range(count, n, rank);
    const auto full = zt::testing::bf16_values(0, count);  // the same on every rank
    std::vector<std::uint16_t> shard(full.begin() + own.offset,
                                     full.begin() + own.offset + own.count);
    std::vector<std::uint16_t> output(static_cast<std::size_t>(count));
    comm->all_gather(zt::testing::tensor_over(shard, DType::kBF16),
                     zt::testing::tensor_over(output, DType::kBF16))
        ->wait();
    EXPECT_EQ(output, full);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllGather),
              2 * zt::testing::ring_all_gather_elements_sent(count, n, rank));
  });
}

}  // namespace
}  // namespace zt::comm
