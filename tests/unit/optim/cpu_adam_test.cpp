// The fused CPU Adam: the scalar path is math::adam_update bit for bit, and so is every vector
// path the CPU has, over several steps (Note [CPU Adam paths agree bit for bit]); the
// compute-dtype copy is core's conversion of the fp32 result, bit for bit; and the pool's
// result does not depend on its thread count.
#include "optim/cpu_adam/cpu_adam.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/random.h"
#include "optim/cpu_adam/cpu_adam_pool.h"
#include "optim/math/optimizer_math.h"

namespace zt::optim {

// Names the path in googletest's messages (found by argument-dependent lookup).
void PrintTo(CpuAdamPath path, std::ostream* out) { *out << cpu_adam_path_name(path); }

namespace {

constexpr std::uint64_t kSeed = 20261203;
constexpr int kSteps = 5;

const std::vector<std::size_t> kLengths{0, 1, 7, 15, 16, 17, 22, 1003, (std::size_t{1} << 20) + 3};

struct AdamVariant {
  const char* name;
  bool decoupled;
  float weight_decay;
};
const AdamVariant kVariants[] = {{"adam", false, 0.0f},
                                 {"adam_l2", false, 0.1f},
                                 {"adamw_no_decay", true, 0.0f},
                                 {"adamw", true, 0.1f}};

// The step scalars as Adam::step forms them: bias corrections in double, rounded once.
math::AdamStepScalars step_scalars(const AdamVariant& variant, int step) {
  const float beta1 = 0.9f, beta2 = 0.999f;
  return math::AdamStepScalars{1e-2f / static_cast<float>(step),  // a decaying learning rate
                               beta1,
                               beta2,
                               1e-8f,
                               variant.weight_decay,
                               static_cast<float>(1.0 - std::pow(double{beta1}, step)),
                               static_cast<float>(1.0 - std::pow(double{beta2}, step)),
                               variant.decoupled};
}

// One sub-group's buffers, filled from fixed seeds: params in [-1, 1), zero moments.
struct GroupBuffers {
  std::vector<float> params, exp_avg, exp_avg_sq;
  std::vector<std::uint16_t> compute;

  explicit GroupBuffers(std::size_t elements)
      : params(elements), exp_avg(elements, 0.0f), exp_avg_sq(elements, 0.0f), compute(elements) {
    const std::uint64_t key = random_key(kSeed, elements);
    for (std::size_t i = 0; i < elements; ++i) params[i] = 2.0f * uniform01(key, i) - 1.0f;
  }
  CpuAdamGroup group(const std::vector<float>& grads, const DType* compute_dtype = nullptr) {
    CpuAdamGroup group;
    group.params = params.data();
    group.grads = grads.data();
    group.exp_avg = exp_avg.data();
    group.exp_avg_sq = exp_avg_sq.data();
    group.elements = params.size();
    if (compute_dtype != nullptr) {
      group.compute_params = compute.data();
      group.compute_dtype = *compute_dtype;
    }
    return group;
  }
};

// Gradients of step `step` in [-1, 1), a different draw each step.
std::vector<float> step_grads(std::size_t elements, int step) {
  std::vector<float> grads(elements);
  const std::uint64_t key = random_key(kSeed, elements, static_cast<std::uint64_t>(step));
  for (std::size_t i = 0; i < elements; ++i) grads[i] = 2.0f * uniform01(key, i) - 1.0f;
  return grads;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The first index where `actual` and `expected` differ in their bits, or -1.
std::int64_t first_difference(const std::vector<float>& actual,
                              const std::vector<float>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      return static_cast<std::int64_t>(i);
    }
  }
  return -1;
}

// "" when `actual` is `expected` bit for bit, else the first element that differs.
std::string difference(const char* what, const std::vector<float>& actual,
                       const std::vector<float>& expected) {
  const std::int64_t index = first_difference(actual, expected);
  if (index < 0) return "";
  const auto i = static_cast<std::size_t>(index);
  char text[128];
  std::snprintf(text, sizeof(text), "%s[%zu] = %.9g, want %.9g", what, i, actual[i], expected[i]);
  return text;
}

TEST(CpuAdamPaths, ScalarComesFirstAndTheBestIsAvailable) {
  const std::vector<CpuAdamPath> paths = available_cpu_adam_paths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), CpuAdamPath::kScalar);
  EXPECT_EQ(paths.back(), best_cpu_adam_path());
  for (CpuAdamPath path : paths) EXPECT_TRUE(cpu_adam_path_available(path));
  EXPECT_EQ(cpu_adam_path_name(CpuAdamPath::kAvx512), "avx512");
}

TEST(CpuAdam, ScalarPathIsAdamUpdateBitForBit) {
  for (const AdamVariant& variant : kVariants) {
    for (std::size_t n : kLengths) {
      SCOPED_TRACE(std::string(variant.name) + ", " + std::to_string(n) + " elements, seed " +
                   std::to_string(kSeed));
      GroupBuffers fused(n), reference(n);
      for (int step = 1; step <= kSteps; ++step) {
        const math::AdamStepScalars scalars = step_scalars(variant, step);
        const std::vector<float> grads = step_grads(n, step);
        cpu_adam_step(CpuAdamPath::kScalar, fused.group(grads), scalars);
        for (std::size_t i = 0; i < n; ++i) {
          math::adam_update(reference.params[i], grads[i], reference.exp_avg[i],
                            reference.exp_avg_sq[i], scalars);
        }
      }
      EXPECT_TRUE(same_bits(fused.params, reference.params));
      EXPECT_TRUE(same_bits(fused.exp_avg, reference.exp_avg));
      EXPECT_TRUE(same_bits(fused.exp_avg_sq, reference.exp_avg_sq));
    }
  }
}

class CpuAdamPathTest : public testing::TestWithParam<CpuAdamPath> {
 protected:
  void SetUp() override {
    if (!cpu_adam_path_available(GetParam())) {
      GTEST_SKIP() << "this CPU lacks the " << cpu_adam_path_name(GetParam())
                   << " path (avx2+fma+f16c, or avx512f)";
    }
  }
};

// Against the scalar path and against a loop over math::adam_update, over several steps, bit
// for bit (Note [CPU Adam paths agree bit for bit]): the lengths cover an empty group, a tail
// alone, whole vectors plus a tail, and 2^20 + 3.
TEST_P(CpuAdamPathTest, MatchesAdamUpdateBitForBitOverSteps) {
  for (const AdamVariant& variant : kVariants) {
    for (std::size_t n : kLengths) {
      SCOPED_TRACE(std::string(variant.name) + ", " + std::to_string(n) + " elements, seed " +
                   std::to_string(kSeed));
      GroupBuffers fused(n), scalar(n), reference(n);
      for (int step = 1; step <= kSteps; ++step) {
        const math::AdamStepScalars scalars = step_scalars(variant, step);
        const std::vector<float> grads = step_grads(n, step);
        cpu_adam_step(GetParam(), fused.group(grads), scalars);
        cpu_adam_step(CpuAdamPath::kScalar, scalar.group(grads), scalars);
        for (std::size_t i = 0; i < n; ++i) {
          math::adam_update(reference.params[i], grads[i], reference.exp_avg[i],
                            reference.exp_avg_sq[i], scalars);
        }
      }
      for (const GroupBuffers* want : {&scalar, &reference}) {
        EXPECT_EQ(difference("p", fused.params, want->params), "");
        EXPECT_EQ(difference("m", fused.exp_avg, want->exp_avg), "");
        EXPECT_EQ(difference("v", fused.exp_avg_sq, want->exp_avg_sq), "");
      }
    }
  }
}

// The fused copy is core's conversion of the fp32 result the same path wrote, bit for bit.
TEST_P(CpuAdamPathTest, ComputeCopyIsCoreConversionOfTheResult) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const AdamVariant& variant : kVariants) {
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{1003}}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + ", " + variant.name + ", " +
                     std::to_string(n) + " elements");
        GroupBuffers buffers(n);
        for (int step = 1; step <= 3; ++step) {
          const std::vector<float> grads = step_grads(n, step);
          cpu_adam_step(GetParam(), buffers.group(grads, &dtype), step_scalars(variant, step));
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t want = dtype == DType::kBF16 ? f32_to_bf16_bits(buffers.params[i])
                                                             : f32_to_f16_bits(buffers.params[i]);
            ASSERT_EQ(buffers.compute[i], want) << "element " << i << ", step " << step;
          }
        }
      }
    }
  }
}

// Values where rounding is delicate, passed through unchanged (lr 0, gradients 0) so that the
// conversion alone is exercised: ties to even, denormals, f16 overflow and underflow, NaNs,
// then random bit patterns over every exponent.
std::vector<float> delicate_values(std::size_t elements) {
  const std::uint32_t bit_patterns[] = {
      0x3F808000u, 0x3F818000u, 0x3F808001u, 0x3F80FFFFu, 0x00000001u, 0x807FFFFFu,
      0x7F7FFFFFu, 0xFF7FFFFFu, 0x7FC12345u, 0xFFC00001u, 0x80000000u, 0x00000000u,
      0x477FE000u,               // 65504, the largest f16
      0x477FEFFFu,               // just below the f16 overflow tie
      0x477FF000u,               // 65520: ties to even into infinity
      0x33000000u,               // 2^-25: half the smallest f16 denormal, ties to zero
      0x33000001u, 0x33C00000u,  // just above it; 3·2^-25, a tie between denormals
      0x387FC000u, 0x38800000u,  // around the smallest normal f16
      0x3F801000u, 0x3F803000u,  // f16 ties at 1 + 2^-11 and 1 + 3·2^-11
  };
  std::vector<float> values(elements);
  const std::uint64_t key = random_key(kSeed, 7);
  for (std::size_t i = 0; i < elements; ++i) {
    std::uint32_t bits;
    if (i < std::size(bit_patterns)) {
      bits = bit_patterns[i];
    } else {
      bits = static_cast<std::uint32_t>(mix64(key ^ mix64(i)));
      if ((bits & 0x7F800000u) == 0x7F800000u) bits &= ~0x00800000u;  // keep it finite
    }
    std::memcpy(&values[i], &bits, sizeof(bits));
  }
  return values;
}

TEST_P(CpuAdamPathTest, ComputeCopyRoundsDelicateValuesAsCore) {
  const std::size_t n = 1003;
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    GroupBuffers buffers(n);
    buffers.params = delicate_values(n);
    const std::vector<float> zero_grads(n, 0.0f);
    math::AdamStepScalars scalars = step_scalars(kVariants[0], 1);
    scalars.lr = 0.0f;
    cpu_adam_step(GetParam(), buffers.group(zero_grads, &dtype), scalars);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t want = dtype == DType::kBF16 ? f32_to_bf16_bits(buffers.params[i])
                                                       : f32_to_f16_bits(buffers.params[i]);
      ASSERT_EQ(buffers.compute[i], want) << "element " << i << " = " << buffers.params[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, CpuAdamPathTest,
                         testing::Values(CpuAdamPath::kScalar, CpuAdamPath::kAvx2,
                                         CpuAdamPath::kAvx512),
                         [](const testing::TestParamInfo<CpuAdamPath>& path_info) {
                           return std::string(cpu_adam_path_name(path_info.param));
                         });

TEST(CpuAdam, EmptyGroupWithNullBuffersIsANoOp) {
  EXPECT_NO_THROW(
      cpu_adam_step(CpuAdamPath::kScalar, CpuAdamGroup{}, step_scalars(kVariants[3], 1)));
  CpuAdamPool pool(2);
  const CpuAdamGroup groups[2] = {};
  EXPECT_NO_THROW(pool.step(best_cpu_adam_path(), groups, step_scalars(kVariants[3], 1)));
}

TEST(CpuAdam, RejectsAComputeCopyThatIsNotBf16OrF16) {
  GroupBuffers buffers(4);
  const std::vector<float> grads(4, 0.5f);
  const DType f32 = DType::kF32;
  EXPECT_THROW(cpu_adam_step(CpuAdamPath::kScalar, buffers.group(grads, &f32),
                             step_scalars(kVariants[3], 1)),
               InternalError);
}

TEST(CpuAdam, RejectsAPathThisCpuLacks) {
  const CpuAdamPath vector_paths[] = {CpuAdamPath::kAvx2, CpuAdamPath::kAvx512};
  const auto missing = std::find_if(std::begin(vector_paths), std::end(vector_paths),
                                    [](CpuAdamPath p) { return !cpu_adam_path_available(p); });
  if (missing == std::end(vector_paths)) GTEST_SKIP() << "this CPU has every path";
  GroupBuffers buffers(4);
  const std::vector<float> grads(4, 0.5f);
  EXPECT_THROW(cpu_adam_step(*missing, buffers.group(grads), step_scalars(kVariants[3], 1)),
               InternalError);
}

// Sub-groups of mixed sizes (empty, one element, several chunks and a ragged end) and mixed
// compute copies: 1, 2 and 3 threads give the same bits as one call on the calling thread.
TEST(CpuAdamPool, ThreadCountDoesNotChangeTheBits) {
  const std::size_t chunk = CpuAdamPool::kChunkElements;
  const std::vector<std::size_t> sizes{3 * chunk + 5, 0, 1, 17, chunk, chunk - 1};
  const DType bf16 = DType::kBF16, f16 = DType::kF16;
  const DType* copies[] = {&bf16, nullptr, &f16, &bf16, nullptr, &f16};
  const CpuAdamPath path = best_cpu_adam_path();
  SCOPED_TRACE(std::string("path ") + std::string(cpu_adam_path_name(path)));

  auto run = [&](int threads) {
    std::vector<GroupBuffers> buffers;
    for (std::size_t n : sizes) buffers.emplace_back(n);
    std::vector<std::vector<float>> grads(sizes.size());
    std::optional<CpuAdamPool> pool;
    if (threads > 0) pool.emplace(threads);
    for (int step = 1; step <= 3; ++step) {
      std::vector<CpuAdamGroup> groups;
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        grads[k] = step_grads(sizes[k], step);
        groups.push_back(buffers[k].group(grads[k], copies[k]));
      }
      const math::AdamStepScalars scalars = step_scalars(kVariants[3], step);
      if (threads == 0) {  // the reference: one group after another on this thread
        for (const CpuAdamGroup& group : groups) cpu_adam_step(path, group, scalars);
      } else {
        pool->step(path, groups, scalars);
      }
    }
    return buffers;
  };
  const std::vector<GroupBuffers> want = run(0);
  for (int threads : {1, 2, 3}) {
    const std::vector<GroupBuffers> got = run(threads);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      SCOPED_TRACE(std::to_string(threads) + " threads, group " + std::to_string(k));
      EXPECT_TRUE(same_bits(got[k].params, want[k].params));
      EXPECT_TRUE(same_bits(got[k].exp_avg, want[k].exp_avg));
      EXPECT_TRUE(same_bits(got[k].exp_avg_sq, want[k].exp_avg_sq));
      if (copies[k] != nullptr) {
        EXPECT_EQ(got[k].compute, want[k].compute);
      }
    }
  }
}

TEST(CpuAdamPool, RejectsZeroThreads) { EXPECT_THROW(CpuAdamPool(0), InternalError); }

}  // namespace
}  // namespace zt::optim
