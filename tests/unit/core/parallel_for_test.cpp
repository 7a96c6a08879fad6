// parallel_for: chunks fixed by size, every iteration once, exceptions rethrown, nested and
// concurrent callers served without deadlock, sums with the same bits on 1 and N threads.
#include "core/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "support/parallel_threads.h"

namespace zt {
namespace {

using testing::kThreadCounts;
using testing::ParallelThreads;
using Chunk = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // (chunk, begin, end)

std::set<Chunk> chunks_run(std::int64_t count, std::int64_t grain) {
  std::mutex mutex;
  std::set<Chunk> chunks;  // guarded by mutex
  parallel_for_chunks(count, grain, [&](std::int64_t chunk, std::int64_t begin, std::int64_t end) {
    const std::lock_guard lock(mutex);
    EXPECT_TRUE(chunks.emplace(chunk, begin, end).second) << "chunk " << chunk << " ran twice";
  });
  return chunks;
}

TEST(ParallelFor, ChunksDependOnSizeAndGrainOnly) {
  EXPECT_EQ(parallel_chunk_count(0, 7), 0);
  EXPECT_EQ(parallel_chunk_count(1, 7), 1);
  EXPECT_EQ(parallel_chunk_count(7, 7), 1);
  EXPECT_EQ(parallel_chunk_count(8, 7), 2);
  const std::set<Chunk> expected = {{0, 0, 7}, {1, 7, 14}, {2, 14, 15}};
  for (const int threads : kThreadCounts) {
    const ParallelThreads scope(threads);
    EXPECT_EQ(chunks_run(15, 7), expected) << threads << " threads";
  }
}

TEST(ParallelFor, RunsEveryIterationOnceOnAnyThreadCount) {
  constexpr std::int64_t kCount = 100003;  // odd, many chunks of 1000 and a short last one
  for (const int threads : kThreadCounts) {
    const ParallelThreads scope(threads);
    std::vector<int> visits(kCount, 0);
    parallel_for(kCount, 1000, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) ++visits[static_cast<std::size_t>(i)];
    });
    for (std::int64_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(visits[static_cast<std::size_t>(i)], 1) << "iteration " << i << ", " << threads;
    }
  }
}

TEST(ParallelFor, ZeroIterationsCallNothing) {
  const ParallelThreads scope(4);
  bool called = false;
  parallel_for(0, 16, [&](std::int64_t, std::int64_t) { called = true; });
  EXPECT_FALSE(called);
  EXPECT_EQ(parallel_sum(0, 16, [](std::int64_t, std::int64_t) { return 1.0; }), 0.0);
}

TEST(ParallelFor, RejectsANonPositiveGrainOrThreadCount) {
  EXPECT_THROW(parallel_for(10, 0, [](std::int64_t, std::int64_t) {}), InternalError);
  EXPECT_THROW(parallel_for(-1, 1, [](std::int64_t, std::int64_t) {}), InternalError);
  EXPECT_THROW(set_parallel_threads(0), InternalError);
}

// Chunk 0 waits (bounded) until chunk 1 has started: only a second thread can start it.
TEST(ParallelFor, RunsChunksOnSeveralThreadsAtOnce) {
  const ParallelThreads scope(2);
  std::mutex mutex;
  std::condition_variable started;
  bool chunk1_started = false;  // guarded by mutex
  bool overlapped = false;
  parallel_for_chunks(2, 1, [&](std::int64_t chunk, std::int64_t, std::int64_t) {
    std::unique_lock lock(mutex);
    if (chunk == 1) {
      chunk1_started = true;
      started.notify_all();
      return;
    }
    overlapped = started.wait_for(lock, std::chrono::seconds(20), [&] { return chunk1_started; });
  });
  EXPECT_TRUE(overlapped) << "chunk 1 did not start while chunk 0 ran: no second thread";
}

TEST(ParallelFor, RethrowsAChunksExceptionAndStaysUsable) {
  for (const int threads : kThreadCounts) {
    const ParallelThreads scope(threads);
    EXPECT_THROW(parallel_for(100, 1,
                              [](std::int64_t begin, std::int64_t) {
                                if (begin == 37) throw std::runtime_error("chunk 37");
                              }),
                 std::runtime_error)
        << threads << " threads";
    EXPECT_FALSE(in_parallel_chunk());
    std::atomic<std::int64_t> iterations{0};
    parallel_for(100, 1, [&](std::int64_t begin, std::int64_t end) { iterations += end - begin; });
    EXPECT_EQ(iterations.load(), 100) << threads << " threads";
  }
}

TEST(ParallelFor, NestedLoopsRunInlineOnTheirChunksThread) {
  const ParallelThreads scope(4);
  EXPECT_FALSE(in_parallel_chunk());
  std::atomic<int> inner_on_other_threads{0};
  std::atomic<int> inner_chunks{0};
  parallel_for(8, 1, [&](std::int64_t, std::int64_t) {
    EXPECT_TRUE(in_parallel_chunk());
    const std::thread::id outer = std::this_thread::get_id();
    parallel_for(16, 1, [&](std::int64_t, std::int64_t) {
      ++inner_chunks;
      if (std::this_thread::get_id() != outer) ++inner_on_other_threads;
    });
  });
  EXPECT_EQ(inner_chunks.load(), 8 * 16);
  EXPECT_EQ(inner_on_other_threads.load(), 0);
  EXPECT_FALSE(in_parallel_chunk());
}

// Ranks as threads: several callers at once, each served (on the pool or inline), none waits
// for another's loop, every result is right.
TEST(ParallelFor, ServesConcurrentCallersFromSeveralThreads) {
  const ParallelThreads scope(2);
  constexpr int kCallers = 4;
  constexpr int kLoops = 200;
  constexpr std::int64_t kCount = 5001;
  std::vector<int> wrong(kCallers, 0);
  std::vector<std::thread> callers;
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&wrong, caller] {
      std::vector<std::int64_t> values(kCount);
      for (int loop = 0; loop < kLoops; ++loop) {
        parallel_for(kCount, 64, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t i = begin; i < end; ++i) values[static_cast<std::size_t>(i)] = i + loop;
        });
        const double sum = parallel_sum(kCount, 64, [&](std::int64_t begin, std::int64_t end) {
          double s = 0.0;
          for (std::int64_t i = begin; i < end; ++i) s += values[static_cast<std::size_t>(i)];
          return s;
        });
        const double expected = kCount * (kCount - 1) / 2.0 + double{kCount} * loop;
        if (sum != expected) ++wrong[static_cast<std::size_t>(caller)];
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (int caller = 0; caller < kCallers; ++caller) {
    EXPECT_EQ(wrong[static_cast<std::size_t>(caller)], 0) << "caller " << caller;
  }
}

TEST(ParallelSum, CapsItsChunksAndKeepsTheAskedGrainBelowTheCap) {
  EXPECT_EQ(parallel_sum_grain(1000, 10), 10);
  EXPECT_EQ(parallel_sum_grain(kMaxSumChunks * 10 + 1, 10), 11);
  EXPECT_LE(
      parallel_chunk_count(std::int64_t{1} << 30, parallel_sum_grain(std::int64_t{1} << 30, 1)),
      kMaxSumChunks);
}

// Terms of very different magnitudes, so any change of summation order changes the bits.
TEST(ParallelSum, GivesTheSameBitsOnAnyThreadCount) {
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{999}, std::int64_t{1000003}}) {
    std::vector<double> terms(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      terms[static_cast<std::size_t>(i)] =
          std::ldexp(1.0 + 0.1 * (i % 7), static_cast<int>(i % 61) - 30);
    }
    const auto sum_on = [&](int threads) {
      const ParallelThreads scope(threads);
      return parallel_sum(count, 1000, [&](std::int64_t begin, std::int64_t end) {
        double s = 0.0;
        for (std::int64_t i = begin; i < end; ++i) s += terms[static_cast<std::size_t>(i)];
        return s;
      });
    };
    const double one = sum_on(1);
    for (const int threads : kThreadCounts) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(sum_on(threads)), std::bit_cast<std::uint64_t>(one))
          << count << " terms, " << threads << " threads";
    }
    EXPECT_NEAR(one, std::accumulate(terms.begin(), terms.end(), 0.0), 1e-9 * std::abs(one));
  }
}

}  // namespace
}  // namespace zt
