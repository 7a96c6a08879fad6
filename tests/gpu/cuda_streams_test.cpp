// CudaStream and CUDA events: a stream that waits on another's event runs after it, a CPU
// event is waited for on the host, events complete after synchronize. Skips without a GPU.
#include "core/device/cuda/cuda_streams.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/device/cpu_streams.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt {
namespace {

TEST(CudaStream, WaitOrdersWorkAfterAnotherStreamsEvent) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "cuda:0 compute");
  CudaStream copy(Device::cuda(0), "cuda:0 copy");
  const std::size_t bytes = std::size_t{256} << 20;  // long enough to be still running
  gpu_test::DeviceBuffer<unsigned char> buffer(bytes);
  std::vector<unsigned char> host(bytes, 0);
  ASSERT_EQ(
      cudaMemsetAsync(buffer.get(), 0, bytes, static_cast<cudaStream_t>(compute.native_handle())),
      cudaSuccess);
  ASSERT_EQ(
      cudaMemsetAsync(buffer.get(), 7, bytes, static_cast<cudaStream_t>(compute.native_handle())),
      cudaSuccess);
  const DeviceEvent written = compute.record();
  EXPECT_NE(written.impl()->native_handle(), nullptr);
  copy.wait(written);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), buffer.get(), bytes, cudaMemcpyDeviceToHost,
                            static_cast<cudaStream_t>(copy.native_handle())),
            cudaSuccess);
  copy.synchronize();
  EXPECT_TRUE(written.is_complete());
  for (std::size_t i = 0; i < bytes; i += 1 << 16) ASSERT_EQ(host[i], 7) << i;
  EXPECT_EQ(host[bytes - 1], 7);
}

TEST(CudaStream, WaitOnACpuEventBlocksTheHostUntilItCompletes) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "cuda:0 compute");
  Event done;
  std::atomic<bool> completed{false};
  std::thread comm([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // so that the wait waits
    completed = true;
    done.complete();
  });
  compute.wait(cpu_device_event(done));
  EXPECT_TRUE(completed.load());
  comm.join();
  compute.wait(DeviceEvent());  // a default event is complete: nothing to wait for
  compute.synchronize();
}

TEST(CudaStream, RecordedEventsCompleteAfterSynchronize) {
  ZT_SKIP_WITHOUT_GPU();
  CudaStream compute(Device::cuda(0), "cuda:0 compute");
  EXPECT_FALSE(compute.is_inline());
  EXPECT_EQ(compute.device(), Device::cuda(0));
  const DeviceEvent event = compute.record();
  compute.synchronize();
  EXPECT_TRUE(event.is_complete());
  event.synchronize();
  const DeviceEvent foreign = record_cuda_event(Device::cuda(0), compute.native_handle());
  foreign.synchronize();
  EXPECT_TRUE(foreign.is_complete());
}

}  // namespace
}  // namespace zt
