// make_device_context: the CPU context, and the ConfigErrors a CUDA request gives where this
// build or this machine cannot serve it (CI has nvcc but no GPU: "no GPU visible" runs there).
#include "core/device/device_context.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace zt {
namespace {

TEST(DeviceBackend, CudaBackendBuiltMatchesTheBuild) {
#if defined(ZT_HAVE_CUDA)
  EXPECT_TRUE(cuda_backend_built());
#else
  EXPECT_FALSE(cuda_backend_built());
#endif
}

TEST(DeviceContext, CpuContextAllocatesThroughItsTracker) {
  auto context = make_device_context(Device::cpu(), 1 << 20);
  EXPECT_EQ(context->device(), Device::cpu());
  EXPECT_TRUE(context->compute_stream().is_inline());
  Tensor t =
      Tensor::empty(Shape({100}), DType::kF32, context->tracker(), MemoryCategory::kWorkspace);
  context->ops().fill(t, 2.0f);
  EXPECT_EQ(context->ops().sum_of_squares(t), 400.0);
  EXPECT_EQ(context->tracker().total_current_bytes(), 400);
  context->synchronize();
}

// Returns the ConfigError's message, or "" when the context was made.
std::string config_error_of(Device device) {
  try {
    make_device_context(device);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceContext, CudaWithoutBackendOrGpuIsAConfigErrorNamingTheKey) {
  const std::string first_gpu = config_error_of(Device::cuda(0));
  if (!cuda_backend_built()) {
    EXPECT_NE(first_gpu.find("runtime.device = \"cuda\""), std::string::npos) << first_gpu;
    EXPECT_NE(first_gpu.find("without the CUDA backend"), std::string::npos) << first_gpu;
    return;
  }
  if (!first_gpu.empty()) {
    // The CI case: a CUDA build on a machine without a GPU.
    EXPECT_NE(first_gpu.find("runtime.device = \"cuda\" but no CUDA GPU is visible"),
              std::string::npos)
        << first_gpu;
    EXPECT_NE(first_gpu.find("cudaGetDeviceCount"), std::string::npos) << first_gpu;
    return;
  }
  // A GPU is there: an index past the visible ones names runtime.device_index.
  const std::string beyond = config_error_of(Device::cuda(1000));
  EXPECT_NE(beyond.find("device index 1000 but only"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("runtime.device_index"), std::string::npos) << beyond;
}

}  // namespace
}  // namespace zt
