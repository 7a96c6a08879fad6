// CUDA next-token selection (f32 and bf16 logits) against the CPU's row function on the same
// logits: the same ids bit for bit, greedy and sampled, with top-k cuts through ties, a top_k
// past the vocabulary, padded columns and a GPT-2-sized vocabulary. Skips without a GPU.
#include "nn/kernels/cuda/token_select_cuda.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/kernels/math/token_select_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::DeviceBuffer;

struct Shape3 {
  std::int64_t rows;
  std::int64_t positions;
  std::int64_t classes;
  std::int64_t columns;  // classes, or more: a padded vocabulary
};
constexpr Shape3 kShapes[] = {
    {1, 1, 1, 1}, {3, 2, 22, 24}, {4, 1, 1000, 1000}, {2, 3, 300, 320}, {2, 1, 50257, 50304}};
constexpr math::TokenSampling kSamplings[] = {
    {0.0f, 0, 5, 0}, {1.0f, 0, 5, 7}, {0.7f, 40, 5, 9}, {1.3f, 1, 5, 2}, {2.0f, 100000, 5, 4}};

template <typename T>
class TokenSelectCuda : public ::testing::Test {};
TYPED_TEST_SUITE(TokenSelectCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

TYPED_TEST(TokenSelectCuda, IdsEqualTheCpuRowsBitForBit) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Shape3 s : kShapes) {
    const auto count = static_cast<std::size_t>(s.rows * s.positions * s.columns);
    // Coarse values (a few distinct logits) so that ties and top-k cuts through them occur.
    std::vector<float> logits = gpu_test::inputs<T>(count, 61, 2.0f);
    for (std::size_t i = 0; i < count; i += 3) logits[i] = static_cast<float>(T(1.0f));
    const std::vector<T> stored = gpu_test::to_storage<T>(logits);
    DeviceBuffer<T> z_dev(stored);
    for (const math::TokenSampling sampling : kSamplings) {
      SCOPED_TRACE("(" + std::to_string(s.rows) + ", " + std::to_string(s.positions) + ", " +
                   std::to_string(s.classes) + " of " + std::to_string(s.columns) +
                   ") temperature " + std::to_string(sampling.temperature) + " top_k " +
                   std::to_string(sampling.top_k));
      std::vector<std::int32_t> want(static_cast<std::size_t>(s.rows));
      for (std::int64_t b = 0; b < s.rows; ++b) {
        const T* row = stored.data() + (b * s.positions + s.positions - 1) * s.columns;
        want[static_cast<std::size_t>(b)] =
            math::select_token(row, s.classes, sampling, static_cast<std::uint64_t>(b));
      }
      DeviceBuffer<std::int32_t> ids_dev(static_cast<std::size_t>(s.rows));
      cuda::select_tokens(z_dev.get(), s.rows, s.positions * s.columns,
                          (s.positions - 1) * s.columns, s.classes, sampling, ids_dev.get(),
                          nullptr);
      EXPECT_EQ(ids_dev.download(), want);
    }
  }
}

}  // namespace
}  // namespace zt::nn
