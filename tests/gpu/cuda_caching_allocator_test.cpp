// CudaCachingAllocator on a real GPU: reuse of freed blocks, splitting and merging in a
// segment, the reserved-bytes cap, out-of-memory as nullptr, and the tracker's refusal that
// lists the categories and the allocator's largest blocks. Skips without a GPU.
#include "core/device/cuda/cuda_caching_allocator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/device/cuda/cuda_streams.h"
#include "core/memory_tracker.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(CudaCachingAllocator, ReusesAFreedBlockOfTheSameRoundedSize) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "test compute");
  CudaCachingAllocator allocator(Device::cuda(0), compute.native_handle());
  void* first = allocator.allocate(1000);
  ASSERT_NE(first, nullptr);
  AllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.allocated_bytes, 1024);
  EXPECT_EQ(stats.reserved_bytes, static_cast<std::int64_t>(2 * kMiB)) << "one small segment";
  EXPECT_EQ(stats.allocations, 1);
  allocator.deallocate(first, 1000);
  void* again = allocator.allocate(1020);
  EXPECT_EQ(again, first);
  void* neighbour = allocator.allocate(512);
  EXPECT_EQ(static_cast<char*>(neighbour), static_cast<char*>(first) + 1024)
      << "a small request splits the same segment";
  EXPECT_EQ(allocator.stats().reserved_bytes, static_cast<std::int64_t>(2 * kMiB));
  allocator.deallocate(again, 1020);
  allocator.deallocate(neighbour, 512);
  EXPECT_EQ(allocator.stats().allocated_bytes, 0);
  allocator.release_cached();
  EXPECT_EQ(allocator.stats().reserved_bytes, 0) << "the merged segment was not given back";
}

TEST(CudaCachingAllocator, FillZeroIsOrderedOnTheComputeStream) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "test compute");
  CudaCachingAllocator allocator(Device::cuda(0), compute.native_handle());
  const std::size_t bytes = 3 * kMiB + 100;
  void* data = allocator.allocate(bytes);
  ASSERT_NE(data, nullptr);
  auto stream = static_cast<cudaStream_t>(compute.native_handle());
  ASSERT_EQ(cudaMemsetAsync(data, 0x5A, bytes, stream), cudaSuccess);
  allocator.fill_zero(data, bytes);
  std::vector<unsigned char> host(bytes, 1);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), data, bytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  compute.synchronize();
  for (std::size_t i = 0; i < bytes; i += 4099) ASSERT_EQ(host[i], 0) << i;
  EXPECT_EQ(host[bytes - 1], 0);
  allocator.deallocate(data, bytes);
}

TEST(CudaCachingAllocator, NeverReservesMoreThanTheCap) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "test compute");
  CudaCachingAllocator allocator(Device::cuda(0), compute.native_handle(), 4 * kMiB);
  void* small = allocator.allocate(100);  // a 2 MiB small segment
  ASSERT_NE(small, nullptr);
  allocator.deallocate(small, 100);
  void* large = allocator.allocate(3 * kMiB);  // 4 MiB: only after the cached segment goes
  ASSERT_NE(large, nullptr);
  EXPECT_LE(allocator.stats().reserved_bytes, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(allocator.allocate(2 * kMiB), nullptr) << "past the cap";
  EXPECT_LE(allocator.stats().reserved_bytes, static_cast<std::int64_t>(4 * kMiB));
  allocator.deallocate(large, 3 * kMiB);
}

TEST(CudaCachingAllocator, MoreThanTheDeviceHasIsNullptr) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "test compute");
  CudaCachingAllocator allocator(Device::cuda(0), compute.native_handle());
  EXPECT_EQ(allocator.allocate(std::size_t{1} << 50), nullptr);  // 1 PiB
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed cudaMalloc left an error behind";
  void* data = allocator.allocate(kMiB);
  EXPECT_NE(data, nullptr) << "the allocator works after an out-of-memory";
  allocator.deallocate(data, kMiB);
}

TEST(CudaCachingAllocator, TrackerRefusalListsCategoriesAndLargestBlocks) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "test compute");
  CudaCachingAllocator allocator(Device::cuda(0), compute.native_handle(), 4 * kMiB);
  MemoryTracker tracker(allocator);
  Allocation params = tracker.allocate(3 << 20, MemoryCategory::kParameters);
  tracker.set_phase("backward block 1");
  try {
    tracker.allocate(2 << 20, MemoryCategory::kGradients, Fill::kUninitialized);
    FAIL() << "an allocation past the allocator's cap succeeded";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    for (const std::string part :
         {"out of memory on cuda:0", "2 MiB of gradients", "during 'backward block 1'",
          "parameters 3 MiB", "allocator holds 4 MiB", "largest blocks in use: 3 MiB"}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " missing in: " << message;
    }
  }
  EXPECT_EQ(tracker.current_bytes(MemoryCategory::kGradients), 0);
}

}  // namespace
}  // namespace zt
