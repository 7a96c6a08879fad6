// CUDA token + position embedding (f32 and bf16 tables) against the CPU rows of the shared
// math on the same ids, with repeated tokens for the scatter-add. Skips without a GPU.
#include "nn/kernels/cuda/embedding_cuda.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn/kernels/math/embedding_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

constexpr std::int64_t kVocab = 50;
constexpr std::int64_t kSeqLen = 8;
constexpr std::int64_t kTokens = 3 * kSeqLen;  // B = 3
constexpr std::int64_t kChannels[] = {1, 22, 768};

template <typename T>
class EmbeddingCuda : public ::testing::Test {};
TYPED_TEST_SUITE(EmbeddingCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

// Ids from a small range so that tokens repeat, within a sequence and across the batch.
std::vector<std::int32_t> token_ids() {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(kTokens));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int32_t>(uniform01(71, i) * 6.0f) * 7;  // 0, 7, ..., 35
  }
  return ids;
}

TYPED_TEST(EmbeddingCuda, ForwardMatchesCpuRowsExactly) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const std::int64_t channels : kChannels) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const auto c = static_cast<std::size_t>(channels);
    const std::vector<std::int32_t> ids = token_ids();
    const std::vector<float> wte = gpu_test::inputs<T>(kVocab * c, 72);
    const std::vector<float> wpe = gpu_test::inputs<T>(kSeqLen * c, 73);
    std::vector<float> out_cpu(kTokens * c);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      math::embedding_forward_row(wte.data() + ids[i] * c, wpe.data() + (i % kSeqLen) * c, channels,
                                  out_cpu.data() + i * c);
    }
    for (float& v : out_cpu) v = static_cast<float>(T(v));
    DeviceBuffer<std::int32_t> ids_dev(ids);
    DeviceBuffer<T> wte_dev(gpu_test::to_storage<T>(wte)), wpe_dev(gpu_test::to_storage<T>(wpe)),
        out_dev(kTokens * c);
    cuda::embedding_forward(ids_dev.get(), wte_dev.get(), wpe_dev.get(), kTokens, kSeqLen, channels,
                            kVocab, out_dev.get(), nullptr);
    // One correctly rounded f32 add and the same rounding to T on both sides.
    EXPECT_TRUE(all_near(gpu_test::to_float(out_dev.download()), out_cpu, 0.0, 0.0));
  }
}

TYPED_TEST(EmbeddingCuda, BackwardScatterAddsLikeCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const std::int64_t channels : kChannels) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    const auto c = static_cast<std::size_t>(channels);
    const std::vector<std::int32_t> ids = token_ids();
    const std::vector<float> dout = gpu_test::inputs<T>(kTokens * c, 74);
    // Non-zero starting gradients pin accumulation.
    std::vector<float> dwte_cpu = gpu_test::inputs<float>(kVocab * c, 75);
    std::vector<float> dwpe_cpu = gpu_test::inputs<float>(kSeqLen * c, 76);
    DeviceBuffer<float> dwte_dev(dwte_cpu), dwpe_dev(dwpe_cpu);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      math::embedding_backward_row(dout.data() + i * c, channels, dwte_cpu.data() + ids[i] * c,
                                   dwpe_cpu.data() + (i % kSeqLen) * c);
    }
    DeviceBuffer<std::int32_t> ids_dev(ids);
    DeviceBuffer<T> dout_dev(gpu_test::to_storage<T>(dout));
    cuda::embedding_backward(ids_dev.get(), dout_dev.get(), kTokens, kSeqLen, channels, kVocab,
                             dwte_dev.get(), dwpe_dev.get(), nullptr);
    // Same fp32 adds in another order: a few ulps of sums of up to ~10 terms. A dropped or
    // doubled token would be off by O(1).
    EXPECT_TRUE(all_near(dwte_dev.download(), dwte_cpu, 1e-5, 1e-5)) << "dwte";
    EXPECT_TRUE(all_near(dwpe_dev.download(), dwpe_cpu, 1e-5, 1e-5)) << "dwpe";
  }
}

}  // namespace
}  // namespace zt::nn
