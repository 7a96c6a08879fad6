// CUDA causal softmax rows (f32 and bf16 storage) against the CPU rows of the shared math on
// the same scores, for one-token, odd and longer sequences. Skips without a GPU.
#include "nn/kernels/cuda/causal_softmax_cuda.h"

#include <gtest/gtest.h>

#include <vector>

#include "nn/kernels/math/attention_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

struct Scores {
  std::int64_t matrices;  // B * heads
  std::int64_t seq_len;
};
constexpr Scores kShapes[] = {{3, 1}, {6, 22}, {1, 257}, {4, 64}, {0, 8}};
// exp and the row sum differ in the last f32 bits (device expf, reduction order).
constexpr double kF32Rel = 1e-5;
constexpr double kF32Abs = 1e-6;

template <typename T>
class CausalSoftmaxCuda : public ::testing::Test {};
TYPED_TEST_SUITE(CausalSoftmaxCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

template <typename T>
std::vector<float> rounded(std::vector<float> values) {
  for (float& v : values) v = static_cast<float>(T(v));
  return values;
}

TYPED_TEST(CausalSoftmaxCuda, ForwardMatchesCpuRowsWithZeroTail) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Scores s : kShapes) {
    SCOPED_TRACE("(" + std::to_string(s.matrices) + " x " + std::to_string(s.seq_len) + ")^2");
    const std::int64_t rows = s.matrices * s.seq_len;
    const auto elements = static_cast<std::size_t>(rows * s.seq_len);
    const std::vector<float> scores = gpu_test::inputs<T>(elements, 31, 4.0f);
    std::vector<float> p_cpu = scores;
    for (std::int64_t r = 0; r < rows; ++r) {
      math::causal_softmax_row(p_cpu.data() + r * s.seq_len, r % s.seq_len, s.seq_len);
    }
    DeviceBuffer<T> dev(gpu_test::to_storage<T>(scores));
    cuda::causal_softmax_forward(dev.get(), rows, s.seq_len, nullptr);
    const std::vector<float> p = gpu_test::to_float(dev.download());
    EXPECT_TRUE(
        all_near(p, rounded<T>(p_cpu), kF32Rel + gpu_test::Storage<T>::kRoundingRel, kF32Abs));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = r % s.seq_len + 1; j < s.seq_len; ++j) {
        ASSERT_EQ(p[static_cast<std::size_t>(r * s.seq_len + j)], 0.0f)
            << "row " << r << " j " << j;
      }
    }
  }
}

TYPED_TEST(CausalSoftmaxCuda, BackwardMatchesCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  for (const Scores s : kShapes) {
    SCOPED_TRACE("(" + std::to_string(s.matrices) + " x " + std::to_string(s.seq_len) + ")^2");
    const std::int64_t rows = s.matrices * s.seq_len;
    const auto elements = static_cast<std::size_t>(rows * s.seq_len);
    std::vector<float> p = gpu_test::inputs<T>(elements, 41, 4.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
      math::causal_softmax_row(p.data() + r * s.seq_len, r % s.seq_len, s.seq_len);
    }
    p = rounded<T>(p);  // both sides start from probabilities T can hold
    const std::vector<float> dp = gpu_test::inputs<T>(elements, 42);
    std::vector<float> ds_cpu = dp;
    for (std::int64_t r = 0; r < rows; ++r) {
      math::causal_softmax_backward_row(p.data() + r * s.seq_len, ds_cpu.data() + r * s.seq_len,
                                        r % s.seq_len, s.seq_len);
    }
    DeviceBuffer<T> p_dev(gpu_test::to_storage<T>(p)), dp_dev(gpu_test::to_storage<T>(dp));
    cuda::causal_softmax_backward(p_dev.get(), dp_dev.get(), rows, s.seq_len, nullptr);
    // ds = p (dp - dot) cancels where dp ~ dot: the error is absolute, ~ ulp(dot) * p.
    EXPECT_TRUE(all_near(gpu_test::to_float(dp_dev.download()), rounded<T>(ds_cpu),
                         kF32Rel + gpu_test::Storage<T>::kRoundingRel, 1e-5));
  }
}

}  // namespace
}  // namespace zt::nn
