// make_device_context for cuda:N on a machine with a GPU: the context's parts, its capped
// tracker, and the ConfigError for an index beyond the visible GPUs. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/device/device_context.h"
#include "core/error.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt {
namespace {

TEST(CudaDeviceContext, IndexBeyondTheVisibleGpusNamesTheKeyAndBothNumbers) {
  ZT_SKIP_WITHOUT_GPU();
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  try {
    make_device_context(Device::cuda(count));
    FAIL() << "cuda:" << count << " was accepted with " << count << " GPUs visible";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("device index " + std::to_string(count)), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(count) + (count == 1 ? " GPU is" : " GPUs are")),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("runtime.device_index"), std::string::npos) << message;
  }
}

TEST(CudaDeviceContext, OwnsStreamsAllocatorAndACappedTracker) {
  ZT_SKIP_WITHOUT_GPU();
  auto context = make_device_context(Device::cuda(0), std::int64_t{8} << 20);
  EXPECT_EQ(context->device(), Device::cuda(0));
  EXPECT_EQ(context->tracker().device(), Device::cuda(0));
  EXPECT_EQ(context->allocator().device(), Device::cuda(0));
  EXPECT_NE(context->compute_stream().native_handle(), nullptr);
  EXPECT_NE(context->copy_stream().native_handle(), context->compute_stream().native_handle());
  EXPECT_FALSE(context->compute_stream().is_inline());
  EXPECT_EQ(context->host_staging_allocator().device(), Device::cpu());
  {
    Tensor t =
        Tensor::zeros(Shape({1000}), DType::kF32, context->tracker(), MemoryCategory::kParameters);
    EXPECT_EQ(t.device(), Device::cuda(0));
    EXPECT_EQ(context->ops().sum_of_squares(t), 0.0) << "Fill::kZero did not zero";
    context->ops().fill(t, 0.5f);
    EXPECT_EQ(context->ops().sum_of_squares(t), 250.0);
    EXPECT_THROW(Tensor::empty(Shape({std::int64_t{3} << 20}), DType::kF32, context->tracker(),
                               MemoryCategory::kActivations),
                 OutOfMemoryError);
  }
  context->synchronize();
  EXPECT_EQ(context->tracker().total_current_bytes(), 0);
}

}  // namespace
}  // namespace zt
