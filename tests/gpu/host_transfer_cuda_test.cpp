// Host staging onto a GPU: parameters initialized into a CUDA buffer (staged a bounded host
// chunk at a time) and exported back equal, bitwise, those initialized in host memory, for a
// layout larger than one staging chunk. Skips without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/device/device_context.h"
#include "nn/models/mlp.h"
#include "sharding/flat_layout.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::zero {
namespace {

TEST(HostTransferCuda, ParametersInitializedOnTheGpuEqualTheHostsBitwise) {
  ZT_SKIP_WITHOUT_GPU();
  // 1024·1100 + 1100 + 1100·4 + 4 = 1 131 904 parameters: more than one 2^20 staging chunk.
  const nn::Model model = nn::make_mlp({1024, 1100, 4});
  const FlatLayout layout = make_flat_layout(model, 3, BlockPadding::kEachBlock);
  ASSERT_GT(layout.padded_numel, std::int64_t{1} << 20);
  const std::unique_ptr<DeviceContext> cpu = make_cpu_device_context();
  const std::unique_ptr<DeviceContext> gpu = make_device_context(Device::cuda(0));
  const Shape flat{layout.padded_numel};
  const Tensor host = Tensor::zeros(flat, DType::kF32, cpu->tracker(), MemoryCategory::kParameters);
  const Tensor device =
      Tensor::zeros(flat, DType::kF32, gpu->tracker(), MemoryCategory::kParameters);
  initialize_parameters(layout, 11, host, *cpu);
  initialize_parameters(layout, 11, device, *gpu);
  const std::vector<float> want = unpadded_parameters(layout, host, *cpu);
  const std::vector<float> got = unpadded_parameters(layout, device, *gpu);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace zt::zero
