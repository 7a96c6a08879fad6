// all_reduce over real Gloo TCP on 127.0.0.1, ranks as threads: sums, avg and max against
// references, bf16/f16 accumulation, bitwise agreement of ranks, and the ring's byte count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// Note [bf16 tolerance]
// Inputs are bf16 values, so their exact sum is known in double. The ring adds in f32 (exact
// for two bf16 inputs, and f32 rounding is 2^16 times finer than bf16's) and rounds the
// partial sum to bf16 after every hop: n-1 roundings with unit roundoff u = 2^-8 (8
// significant bits). The classic bound for recursive summation gives
// |ring - exact| <= (n-1) u sum_r |x_r| (to first order); we allow n u sum_r |x_r|, the
// extra u covering the final division of avg and second-order terms.
double bf16_tolerance(int n, std::int64_t i) {
  double magnitude = 0;
  for (int r = 0; r < n; ++r) magnitude += std::fabs(zt::testing::fractional_pattern(r, i));
  return n * std::ldexp(1.0, -8) * magnitude;
}

TEST(AllReduce, F32SumOfIntegersIsExactAtWorldSizes2To4) {
  for (int n : {2, 3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      for (std::int64_t count : {0, 1, 7, 1000, 262147}) {
        auto data = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
        comm->all_reduce(zt::testing::tensor_over(data, DType::kF32), ReduceOp::kSum)->wait();
        auto expected = [&](std::int64_t i) {
          double sum = 0;
          for (int r = 0; r < n; ++r) sum += zt::testing::integer_pattern(r, i);
          return sum;
        };
        EXPECT_EQ(count_mismatches(
                      count, [&](std::int64_t i) { return data[static_cast<std::size_t>(i)]; },
                      expected, exact(), "n=" + std::to_string(n)),
                  0);
      }
    });
  }
}

TEST(AllReduce, AvgDividesTheSumByWorldSizeAndMaxTakesTheLargest) {
  const int n = 3;
  const std::int64_t count = 1001;
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    auto avg = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
    auto max = avg;
    auto avg_work = comm->all_reduce(zt::testing::tensor_over(avg, DType::kF32), ReduceOp::kAvg);
    auto max_work = comm->all_reduce(zt::testing::tensor_over(max, DType::kF32), ReduceOp::kMax);
    avg_work->wait();
    max_work->wait();
    auto at = [](const std::vector<float>& v) {
      return [&v](std::int64_t i) { return v[static_cast<std::size_t>(i)]; };
    };
    // The integer sum is exact in f32, so sum / n in f32 is the one correctly rounded value.
    auto expected_avg = [&](std::int64_t i) {
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += zt::testing::integer_pattern(r, i);
      return static_cast<double>(sum / static_cast<float>(n));
    };
    auto expected_max = [&](std::int64_t i) {
      float best = zt::testing::integer_pattern(0, i);
      for (int r = 1; r < n; ++r) best = std::max(best, zt::testing::integer_pattern(r, i));
      return static_cast<double>(best);
    };
    EXPECT_EQ(count_mismatches(count, at(avg), expected_avg, exact(), "avg"), 0);
    EXPECT_EQ(count_mismatches(count, at(max), expected_max, exact(), "max"), 0);
  });
}

TEST(AllReduce, Bf16TwoRanksRoundTheF32SumOnce) {
  // One hop: the result must be exactly bf16(x0 + x1), the sum taken in f32.
  const std::int64_t count = 4099;
  MemoryStore store;
  run_ranks(2, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, 2, test_options(test_group()));
    auto data = zt::testing::bf16_values(rank, count);
    comm->all_reduce(zt::testing::tensor_over(data, DType::kBF16), ReduceOp::kSum)->wait();
    auto actual = [&](std::int64_t i) {
      return bf16_bits_to_f32(data[static_cast<std::size_t>(i)]);
    };
    auto expected = [](std::int64_t i) {
      const float sum =
          zt::testing::fractional_pattern(0, i) + zt::testing::fractional_pattern(1, i);
      return static_cast<double>(bf16_bits_to_f32(f32_to_bf16_bits(sum)));
    };
    EXPECT_EQ(count_mismatches(count, actual, expected, exact(), "bf16 sum"), 0);
  });
}

TEST(AllReduce, Bf16SumAndAvgStayWithinOneRoundingPerHop) {
  for (int n : {3, 4}) {
    const std::int64_t count = 50003;
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
        auto data = zt::testing::bf16_values(rank, count);
        comm->all_reduce(zt::testing::tensor_over(data, DType::kBF16), op)->wait();
        const double divisor = op == ReduceOp::kAvg ? n : 1;
        auto actual = [&](std::int64_t i) {
          return bf16_bits_to_f32(data[static_cast<std::size_t>(i)]);
        };
        auto expected = [&](std::int64_t i) {
          double sum = 0;
          for (int r = 0; r < n; ++r) sum += zt::testing::fractional_pattern(r, i);
          return sum / divisor;
        };
        auto tolerance = [&](std::int64_t i) { return bf16_tolerance(n, i) / divisor; };
        EXPECT_EQ(
            count_mismatches(count, actual, expected, tolerance, "bf16 n=" + std::to_string(n)), 0);
      }
    });
  }
}

TEST(AllReduce, EveryRankEndsWithBitwiseTheSameBf16Result) {
  const int n = 3;
  const std::int64_t count = 30001;
  std::vector<std::vector<std::uint16_t>> results(n);
  MemoryStore store;
  run_ranks(n, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, n, test_options(test_group()));
    auto& data = results[static_cast<std::size_t>(rank)];
    data = zt::testing::bf16_values(rank, count);
    comm->all_reduce(zt::testing::tensor_over(data, DType::kBF16), ReduceOp::kSum)->wait();
  });
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(AllReduce, F16SumsInF32AndRoundsOncePerHop) {
  const std::int64_t count = 2049;
  MemoryStore store;
  run_ranks(2, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, 2, test_options(test_group()));
    std::vector<std::uint16_t> data(count);
    for (std::int64_t i = 0; i < count; ++i) {
      data[static_cast<std::size_t>(i)] = f32_to_f16_bits(zt::testing::fractional_pattern(rank, i));
    }
    comm->all_reduce(zt::testing::tensor_over(data, DType::kF16), ReduceOp::kSum)->wait();
    auto actual = [&](std::int64_t i) {
      return f16_bits_to_f32(data[static_cast<std::size_t>(i)]);
    };
    auto expected = [](std::int64_t i) {
      const float sum = f16_bits_to_f32(f32_to_f16_bits(zt::testing::fractional_pattern(0, i))) +
                        f16_bits_to_f32(f32_to_f16_bits(zt::testing::fractional_pattern(1, i)));
      return static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(sum)));
    };
    EXPECT_EQ(count_mismatches(count, actual, expected, exact(), "f16 sum"), 0);
  });
}

TEST(AllReduce, RingSendsTwoNMinusOneOverNOfTheBuffer) {
  for (int n : {3, 4}) {
    MemoryStore store;
    run_ranks(n, [&](int rank) {
      auto comm =
          create_cpu_communicator(store, rank, n, test_options(test_group(std::to_string(n))));
      const std::int64_t divisible = 1200;  // 2 (n-1)/n exactly
      const std::int64_t uneven = 1003;     // every chunk but shard(r) and shard(r+1), twice
      auto a = zt::testing::f32_values(rank, divisible, zt::testing::integer_pattern);
      comm->all_reduce(zt::testing::tensor_over(a, DType::kF32), ReduceOp::kSum)->wait();
      EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllReduce),
                static_cast<std::uint64_t>(2 * (n - 1) * divisible / n * 4));
      auto b = zt::testing::f32_values(rank, uneven, zt::testing::integer_pattern);
      comm->all_reduce(zt::testing::tensor_over(b, DType::kF32), ReduceOp::kSum)->wait();
      const std::uint64_t uneven_bytes =
          4 * (zt::testing::ring_reduce_scatter_elements_sent(uneven, n, rank) +
               zt::testing::ring_all_gather_elements_sent(uneven, n, rank));
      EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllReduce),
                static_cast<std::uint64_t>(2 * (n - 1) * divisible / n * 4) + uneven_bytes);
      EXPECT_EQ(comm->counters().ops[static_cast<std::size_t>(CollectiveKind::kAllReduce)], 2u);
    });
  }
}

TEST(AllReduce, SixtyFourMiBAtTwoRanks) {
  const std::int64_t count = std::int64_t{16} << 20;  // 64 MiB of f32
  MemoryStore store;
  run_ranks(2, [&](int rank) {
    auto comm = create_cpu_communicator(store, rank, 2, test_options(test_group()));
    auto data = zt::testing::f32_values(rank, count, zt::testing::integer_pattern);
    comm->all_reduce(zt::testing::tensor_over(data, DType::kF32), ReduceOp::kSum)->wait();
    auto expected = [](std::int64_t i) {
      return static_cast<double>(zt::testing::integer_pattern(0, i) +
                                 zt::testing::integer_pattern(1, i));
    };
    EXPECT_EQ(count_mismatches(
                  count, [&](std::int64_t i) { return data[static_cast<std::size_t>(i)]; },
                  expected, exact(), "64 MiB"),
              0);
    EXPECT_EQ(comm->counters().bytes(CollectiveKind::kAllReduce),
              static_cast<std::uint64_t>(count) * 4);
  });
}

}  // namespace
}  // namespace zt::comm
