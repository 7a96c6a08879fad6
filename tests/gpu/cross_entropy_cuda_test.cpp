// CUDA fused softmax cross-entropy (f32 and bf16 logits) against the CPU rows of the shared
// math on the same logits and targets, up to a GPT-2-sized vocabulary, padded or not (Note
// [Padded vocabulary]). Skips without a GPU.
#include "nn/kernels/cuda/cross_entropy_cuda.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "nn/kernels/math/cross_entropy_math.h"
#include "tests/gpu/gpu_test_util.h"

namespace zt::nn {
namespace {

using gpu_test::all_near;
using gpu_test::DeviceBuffer;

struct Logits {
  std::int64_t rows;
  std::int64_t classes;
  std::int64_t columns;  // classes, or more: a padded vocabulary
};
constexpr Logits kShapes[] = {{1, 1, 1},         {7, 22, 22},   {3, 1000, 1000},
                              {4, 50257, 50304}, {3, 300, 320}, {0, 5, 5}};

template <typename T>
class CrossEntropyCuda : public ::testing::Test {};
TYPED_TEST_SUITE(CrossEntropyCuda, gpu_test::StorageTypes, gpu_test::StorageNames);

std::vector<std::int32_t> targets_for(const Logits& s, std::uint64_t key) {
  std::vector<std::int32_t> targets(static_cast<std::size_t>(s.rows));
  for (std::size_t r = 0; r < targets.size(); ++r) {
    const auto target =
        static_cast<std::int64_t>(uniform01(key, r) * static_cast<float>(s.classes));
    targets[r] = static_cast<std::int32_t>(std::min(target, s.classes - 1));
  }
  return targets;
}

// Runs the CPU rows and the kernel (dlogits in a separate buffer or over the logits) and
// compares losses and dlogits.
template <typename T>
void expect_matches_cpu(const Logits& s, bool in_place) {
  const auto rows = static_cast<std::size_t>(s.rows);
  const auto columns = static_cast<std::size_t>(s.columns);
  const std::vector<float> logits = gpu_test::inputs<T>(rows * columns, 51, 3.0f);
  const std::vector<std::int32_t> targets = targets_for(s, 52);
  const float grad_scale = s.rows > 0 ? 1.0f / static_cast<float>(s.rows) : 1.0f;
  std::vector<float> loss_cpu(rows), dz_cpu(rows * columns);
  for (std::size_t r = 0; r < rows; ++r) {
    loss_cpu[r] =
        math::softmax_cross_entropy_row(logits.data() + r * columns, s.classes, s.columns,
                                        targets[r], grad_scale, dz_cpu.data() + r * columns);
  }
  for (float& v : dz_cpu) v = static_cast<float>(T(v));
  DeviceBuffer<T> z_dev(gpu_test::to_storage<T>(logits)), dz_dev(rows * columns);
  DeviceBuffer<std::int32_t> t_dev(targets);
  DeviceBuffer<float> loss_dev(rows);
  T* dz = in_place ? z_dev.get() : dz_dev.get();
  cuda::softmax_cross_entropy(z_dev.get(), t_dev.get(), s.rows, s.classes, s.columns, grad_scale,
                              loss_dev.get(), dz, nullptr);
  // Σ exp over 50257 classes: the CPU's serial f32 sum is off by ~sqrt(C) ulps (~1e-5
  // relative), the block tree by fewer; p and the loss inherit that.
  EXPECT_TRUE(all_near(loss_dev.download(), loss_cpu, 1e-5, 1e-4)) << "loss";
  const std::vector<float> dz_got = gpu_test::to_float((in_place ? z_dev : dz_dev).download());
  EXPECT_TRUE(all_near(dz_got, dz_cpu, 1e-4 + gpu_test::Storage<T>::kRoundingRel, 1e-7))
      << "dlogits";
}

TYPED_TEST(CrossEntropyCuda, LossAndDlogitsMatchCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  for (const Logits s : kShapes) {
    SCOPED_TRACE("(" + std::to_string(s.rows) + ", " + std::to_string(s.classes) + " of " +
                 std::to_string(s.columns) + ")");
    expect_matches_cpu<TypeParam>(s, /*in_place=*/false);
  }
}

TYPED_TEST(CrossEntropyCuda, DlogitsOverwritingLogitsMatchCpuRows) {
  ZT_SKIP_WITHOUT_GPU();
  for (const Logits s : kShapes) {
    SCOPED_TRACE("(" + std::to_string(s.rows) + ", " + std::to_string(s.classes) + " of " +
                 std::to_string(s.columns) + ")");
    expect_matches_cpu<TypeParam>(s, /*in_place=*/true);
  }
}

TYPED_TEST(CrossEntropyCuda, LossOnlyWithoutDlogits) {
  ZT_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const Logits s{5, 300, 300};
  const std::vector<float> logits = gpu_test::inputs<T>(1500, 61, 3.0f);
  const std::vector<std::int32_t> targets = targets_for(s, 62);
  std::vector<float> loss_cpu(5), scratch(300);
  for (std::size_t r = 0; r < 5; ++r) {
    loss_cpu[r] = math::softmax_cross_entropy_row(logits.data() + r * 300, 300, 300, targets[r],
                                                  1.0f, scratch.data());
  }
  DeviceBuffer<T> z_dev(gpu_test::to_storage<T>(logits));
  DeviceBuffer<std::int32_t> t_dev(targets);
  DeviceBuffer<float> loss_dev(5);
  cuda::softmax_cross_entropy<T>(z_dev.get(), t_dev.get(), s.rows, s.classes, s.columns, 1.0f,
                                 loss_dev.get(), nullptr, nullptr);
  EXPECT_TRUE(all_near(loss_dev.download(), loss_cpu, 1e-5, 1e-4));
  // The logits are left as they were.
  EXPECT_TRUE(all_near(gpu_test::to_float(z_dev.download()), logits, 0.0, 0.0));
}

}  // namespace
}  // namespace zt::nn
