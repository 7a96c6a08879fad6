// PooledHostAllocator: size classes, reuse without zeroing, the cache limit, blocks that
// bypass the pool, stats with the largest blocks, release_cached, two threads at once, and
// the tracker's out-of-memory message with the allocator's figures.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/device/cpu_allocator.h"
#include "core/device/cpu_pool_allocator.h"
#include "core/device/host_size_class.h"
#include "core/memory_tracker.h"

namespace zt {
namespace {

// The C heap, counted; refuses once `capacity_blocks` blocks are out (0: never).
class CountingHostMemory final : public HostMemorySource {
 public:
  explicit CountingHostMemory(int capacity_blocks = 0) : capacity_blocks_(capacity_blocks) {}
  void* obtain(std::size_t bytes) noexcept override {
    if (capacity_blocks_ > 0 && obtained - given_back >= capacity_blocks_) return nullptr;
    ++obtained;
    return system_host_memory().obtain(bytes);
  }
  void give_back(void* data, std::size_t bytes) noexcept override {
    ++given_back;
    system_host_memory().give_back(data, bytes);
  }
  std::atomic<int> obtained{0};
  std::atomic<int> given_back{0};

 private:
  const int capacity_blocks_;
};

TEST(HostSizeClass, RoundsUpToQuarterStepsOfPowersOfTwo) {
  EXPECT_EQ(host_size_class_bytes(1), 64u);
  EXPECT_EQ(host_size_class_bytes(64), 64u);
  EXPECT_EQ(host_size_class_bytes(65), 128u);
  EXPECT_EQ(host_size_class_bytes(129), 192u);
  EXPECT_EQ(host_size_class_bytes(1024), 1024u);
  EXPECT_EQ(host_size_class_bytes(1025), 1280u);
  EXPECT_EQ(host_size_class_bytes((1u << 20) + 1), (1u << 20) + (1u << 18));
  for (std::size_t bytes = 1; bytes < (1u << 16); bytes += 37) {
    const std::size_t rounded = host_size_class_bytes(bytes);
    ASSERT_GE(rounded, bytes);
    ASSERT_EQ(rounded % 64, 0u);
    ASSERT_LE(rounded, bytes < 64 ? 64 : bytes + bytes / 4 + 64) << bytes;
  }
}

TEST(HostSizeClass, IndicesAreDenseAndInvertible) {
  for (std::size_t index = 0; index < kHostSizeClassCount; ++index) {
    const std::size_t class_bytes = host_size_class_at(index);
    ASSERT_EQ(host_size_class_bytes(class_bytes), class_bytes) << index;  // a class
    ASSERT_EQ(host_size_class_index(class_bytes), index);
    if (index > 0) {  // the next class up from the previous one: no class skipped
      ASSERT_EQ(host_size_class_bytes(host_size_class_at(index - 1) + 1), class_bytes) << index;
    }
  }
  EXPECT_EQ(host_size_class_index(64), 0u);
  EXPECT_EQ(host_size_class_index(320), 4u);
  EXPECT_EQ(host_size_class_at(kHostSizeClassCount - 1), std::size_t{1} << 63);
}

// The steady state of training: the same sizes allocated and freed over and over reach the
// source only the first time, and the counter says so.
TEST(PooledHostAllocator, RepeatedRoundsObtainNoNewBlocks) {
  CountingHostMemory source;
  PooledHostAllocator pool(source, HostPoolLimits{});
  MemoryTracker tracker(pool);
  const std::vector<std::int64_t> sizes{100, 4096, 4096, 70'000, 3 << 20, 64, 1 << 20};
  std::int64_t obtained_after_first = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<Allocation> live;
    for (const std::int64_t bytes : sizes) {
      live.push_back(tracker.allocate(bytes, MemoryCategory::kActivations, Fill::kUninitialized));
    }
    live.clear();
    if (round == 0) obtained_after_first = pool.stats().blocks_obtained;
  }
  EXPECT_EQ(obtained_after_first, static_cast<std::int64_t>(sizes.size()));
  EXPECT_EQ(pool.stats().blocks_obtained, obtained_after_first);
  EXPECT_EQ(source.obtained.load(), static_cast<int>(sizes.size()));
  EXPECT_EQ(source.given_back.load(), 0);
}

TEST(PooledHostAllocator, ReusesAFreedBlockOfTheSameClassWithoutZeroingIt) {
  CountingHostMemory source;
  PooledHostAllocator pool(source, HostPoolLimits{});
  MemoryTracker tracker(pool);
  void* first_data = nullptr;
  {
    Allocation first = tracker.allocate(1000, MemoryCategory::kActivations, Fill::kUninitialized);
    first_data = first.data();
    std::memset(first.data(), 0xAB, 1000);
  }
  Allocation again = tracker.allocate(1010, MemoryCategory::kActivations, Fill::kUninitialized);
  EXPECT_EQ(again.data(), first_data) << "1000 and 1010 B share the 1024 B class";
  EXPECT_EQ(source.obtained.load(), 1);
  const auto* bytes = static_cast<const unsigned char*>(again.data());
  EXPECT_EQ(bytes[0], 0xAB);
  EXPECT_EQ(bytes[999], 0xAB) << "an uninitialized allocation was zeroed";
  again = Allocation();
  Allocation zeroed = tracker.allocate(1000, MemoryCategory::kActivations, Fill::kZero);
  EXPECT_EQ(zeroed.data(), first_data);
  const auto* zero_bytes = static_cast<const unsigned char*>(zeroed.data());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(zero_bytes[i], 0) << i;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(zeroed.data()) % DeviceAllocator::kMinAlignment, 0u);
}

TEST(PooledHostAllocator, StatsCountRoundedBlocksAndListTheLargestEight) {
  CountingHostMemory source;
  PooledHostAllocator pool(source, HostPoolLimits{});
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t i = 1; i <= 10; ++i) {
    const std::size_t bytes = i * 1024;
    blocks.emplace_back(pool.allocate(bytes), bytes);
  }
  AllocatorStats stats = pool.stats();
  EXPECT_EQ(stats.allocations, 10);
  std::int64_t expected = 0;
  for (std::size_t i = 1; i <= 10; ++i) {
    expected += static_cast<std::int64_t>(host_size_class_bytes(i * 1024));
  }
  EXPECT_EQ(stats.allocated_bytes, expected);
  EXPECT_EQ(stats.reserved_bytes, expected);
  ASSERT_EQ(stats.largest_allocated_blocks.size(), 8u);
  EXPECT_EQ(stats.largest_allocated_blocks.front(), 10 * 1024);
  for (std::size_t i = 1; i < 8; ++i) {
    EXPECT_GE(stats.largest_allocated_blocks[i - 1], stats.largest_allocated_blocks[i]);
  }
  for (const auto& [data, bytes] : blocks) pool.deallocate(data, bytes);
  stats = pool.stats();
  EXPECT_EQ(stats.allocated_bytes, 0);
  EXPECT_EQ(stats.allocations, 0);
  EXPECT_EQ(stats.reserved_bytes, expected) << "freed blocks stay cached";
  EXPECT_TRUE(stats.largest_allocated_blocks.empty());
  EXPECT_EQ(source.given_back.load(), 0);
  pool.release_cached();
  EXPECT_EQ(pool.stats().reserved_bytes, 0);
  EXPECT_EQ(source.given_back.load(), 10);
}

TEST(PooledHostAllocator, KeepsNoMoreThanTheCacheLimitIdle) {
  CountingHostMemory source;
  HostPoolLimits limits;
  limits.max_cached_bytes = 4096;
  PooledHostAllocator pool(source, limits);
  std::vector<void*> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(pool.allocate(1024));
  for (void* data : blocks) pool.deallocate(data, 1024);
  EXPECT_EQ(pool.stats().reserved_bytes, 4096);
  EXPECT_EQ(source.given_back.load(), 2);
}

TEST(PooledHostAllocator, BlocksAboveThePooledSizeGoStraightBack) {
  CountingHostMemory source;
  HostPoolLimits limits;
  limits.max_pooled_block_bytes = 1 << 16;
  PooledHostAllocator pool(source, limits);
  void* large = pool.allocate((1 << 16) + 1);
  EXPECT_EQ(pool.stats().largest_allocated_blocks.front(),
            static_cast<std::int64_t>(host_size_class_bytes((1 << 16) + 1)));
  pool.deallocate(large, (1 << 16) + 1);
  EXPECT_EQ(source.given_back.load(), 1);
  EXPECT_EQ(pool.stats().reserved_bytes, 0);
}

TEST(PooledHostAllocator, UnpooledGivesEveryBlockBack) {
  CountingHostMemory source;
  HostPoolLimits limits;
  limits.pool = false;
  PooledHostAllocator pool(source, limits);
  for (int i = 0; i < 3; ++i) pool.deallocate(pool.allocate(256), 256);
  EXPECT_EQ(source.obtained.load(), 3);
  EXPECT_EQ(source.given_back.load(), 3);
}

TEST(PooledHostAllocator, TwoThreadsBalance) {
  CountingHostMemory source;
  PooledHostAllocator pool(source, HostPoolLimits{});
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::size_t bytes = 64 + static_cast<std::size_t>((i * 7 + t) % 50) * 100;
        void* data = pool.allocate(bytes);
        static_cast<unsigned char*>(data)[bytes - 1] = 1;
        pool.deallocate(data, bytes);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const AllocatorStats stats = pool.stats();
  EXPECT_EQ(stats.allocations, 0);
  EXPECT_EQ(stats.allocated_bytes, 0);
  EXPECT_LE(source.obtained.load(), 2 * 50) << "every size class obtained at most once per thread";
}

TEST(PooledHostAllocator, TrackerRefusalListsCategoriesAndTheAllocatorsLargestBlocks) {
  CountingHostMemory source(2);  // the "system" has room for two blocks
  PooledHostAllocator pool(source, HostPoolLimits{});
  MemoryTracker tracker(pool);
  Allocation params = tracker.allocate(3 << 20, MemoryCategory::kParameters);
  Allocation grads = tracker.allocate(1 << 20, MemoryCategory::kGradients);
  tracker.set_phase("backward block 2");
  try {
    tracker.allocate(4096, MemoryCategory::kActivations);
    FAIL() << "the refusing source was not reported";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    for (const std::string part :
         {"activations", "during 'backward block 2'", "no memory left", "parameters 3 MiB",
          "gradients 1 MiB", "host allocator holds 4 MiB", "in 2 blocks in use",
          "largest blocks in use: 3 MiB, 1 MiB"}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " missing in: " << message;
    }
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kActivations), 0);
}

TEST(HostAllocator, PoolsExceptUnderAddressSanitizer) {
  DeviceAllocator& allocator = host_allocator();
  void* first = allocator.allocate(12345);
  allocator.deallocate(first, 12345);
  const std::int64_t reserved_after_free = allocator.stats().reserved_bytes;
  if (host_allocator_pools_blocks()) {
    EXPECT_GE(reserved_after_free, static_cast<std::int64_t>(host_size_class_bytes(12345)));
    allocator.release_cached();
    EXPECT_EQ(allocator.stats().reserved_bytes, allocator.stats().allocated_bytes);
  } else {
    EXPECT_EQ(reserved_after_free, allocator.stats().allocated_bytes) << "ASan build cached";
  }
}

}  // namespace
}  // namespace zt

namespace zt {
namespace {

// Blocks of a page or more are page-aligned (offloaded states, direct-I/O buffers); smaller
// ones keep the allocator's minimum alignment.
TEST(SystemHostMemory, BlocksOfAPageOrMoreArePageAligned) {
  HostMemorySource& memory = system_host_memory();
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{5000}, std::size_t{1} << 20}) {
    void* data = memory.obtain(bytes);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data) % 4096, 0u) << bytes << " bytes";
    std::memset(data, 1, bytes);  // the whole block is usable (ASan checks the tail)
    memory.give_back(data, bytes);
  }
  void* small = memory.obtain(100);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % DeviceAllocator::kMinAlignment, 0u);
  memory.give_back(small, 100);
}

}  // namespace
}  // namespace zt
