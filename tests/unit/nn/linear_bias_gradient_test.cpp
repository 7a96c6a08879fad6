// The CPU Linear's bias gradients (linear_backward's dbias and the fused GELU's pre-GELU bias
// gradient): each column is the f32 sum of its rows in row order, bit for bit, in f32 and bf16,
// over widths that cut into several column chunks and blocks with tails, on 1, 2 and 4 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"
#include "cpu_test_context.h"
#include "support/parallel_threads.h"

namespace zt::nn {
namespace {

using zt::testing::kThreadCounts;
using zt::testing::ParallelThreads;

Tensor seeded(const Shape& shape, DType dtype, MemoryTracker& tracker, std::uint64_t seed) {
  Tensor t = Tensor::zeros(shape, dtype, tracker, MemoryCategory::kActivations);
  std::vector<float> values(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = standard_normal(seed, i);
  if (!values.empty()) convert_elements(values.data(), DType::kF32, t.data(), dtype, values.size());
  return t;
}

std::vector<float> widened(const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  if (!out.empty()) convert_elements(t.data(), t.dtype(), out.data(), DType::kF32, out.size());
  return out;
}

// start[c] + values[0, c] + values[1, c] + ..., one f32 add at a time.
std::vector<float> row_order_sums(const std::vector<float>& start, const std::vector<float>& values,
                                  std::int64_t rows) {
  std::vector<float> sums = start;
  const std::size_t cols = sums.size();
  for (std::int64_t n = 0; n < rows; ++n) {
    for (std::size_t c = 0; c < cols; ++c)
      sums[c] += values[static_cast<std::size_t>(n) * cols + c];
  }
  return sums;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(LinearBiasGradient, EachColumnIsItsRowsSummedInRowOrder) {
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    for (const int threads : kThreadCounts) {
      const ParallelThreads scope(threads);
      MemoryTracker tracker(Device::cpu());
      testing::CpuTestContext cpu(tracker);
      // out spans two column chunks and a 16- and 1-column tail; in a 64-column block and tails.
      const std::int64_t rows = 75, in = 83, out = 531;
      const Tensor x = seeded(Shape{rows, in}, dtype, tracker, 1);
      const Tensor w = seeded(Shape{out, in}, dtype, tracker, 2);
      const Tensor dy = seeded(Shape{rows, out}, dtype, tracker, 3);
      const Tensor dx =
          Tensor::zeros(Shape{rows, in}, dtype, tracker, MemoryCategory::kActivations);
      const Tensor dw = seeded(Shape{out, in}, DType::kF32, tracker, 4);
      const Tensor db = seeded(Shape{out}, DType::kF32, tracker, 5);
      const Tensor x_pre = seeded(Shape{rows, in}, dtype, tracker, 6);
      const Tensor x_pre_db = seeded(Shape{in}, DType::kF32, tracker, 7);
      const std::vector<float> db_start = widened(db), x_pre_db_start = widened(x_pre_db);
      testing::cpu_kernels().linear_backward(cpu.device(), x, w, dy, dx, dw, db, x_pre, x_pre_db);
      const std::string what =
          std::string(dtype_name(dtype)) + ", " + std::to_string(threads) + " threads";
      EXPECT_TRUE(same_bits(widened(db), row_order_sums(db_start, widened(dy), rows))) << what;
      if (dtype == DType::kF32) {  // dx is then the f32 gradient the pre-GELU bias sums
        EXPECT_TRUE(same_bits(widened(x_pre_db), row_order_sums(x_pre_db_start, widened(dx), rows)))
            << what;
      }
    }
  }
}

}  // namespace
}  // namespace zt::nn
