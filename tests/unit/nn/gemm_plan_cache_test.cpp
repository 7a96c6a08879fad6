// GemmPlanCache (Note [Fused when offered]): the library is asked once per key, a key it
// offers nothing for runs unfused and is logged once, and operand alignment is what the
// addresses and row strides guarantee.
#include "nn/kernels/gemm_plan_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zt::nn {
namespace {

struct FakePlan {
  int id = 0;
};

GemmPlanKey key_of(std::int64_t n, std::string_view epilogue = "DGELU_BGRAD") {
  GemmPlanKey key;
  key.m = 10;
  key.n = n;
  key.k = 24;
  key.lda = 24;
  key.ldb = 24;
  key.ldc = n;
  key.in_dtype = DType::kBF16;
  key.out_dtype = DType::kBF16;
  key.epilogue = epilogue;
  key.alignment_a_bytes = key.alignment_b_bytes = key.alignment_c_bytes = 16;
  key.workspace_bytes = 1 << 20;
  return key;
}

struct Recorder {
  std::vector<std::string> lines;
  GemmPlanCache<FakePlan>::Log log() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST(GemmPlanCache, NothingOfferedRunsUnfusedAskedAndLoggedOncePerKey) {
  Recorder recorder;
  GemmPlanCache<FakePlan> cache(recorder.log());
  int asked = 0;
  const auto offer_nothing = [&](const GemmPlanKey&) {
    ++asked;
    return std::unique_ptr<FakePlan>();
  };
  for (int call = 0; call < 5; ++call) {
    EXPECT_EQ(cache.find(key_of(36), offer_nothing), nullptr);
  }
  EXPECT_EQ(asked, 1);
  ASSERT_EQ(recorder.lines.size(), 1u);
  EXPECT_NE(recorder.lines[0].find("(m 10, n 36, k 24)"), std::string::npos) << recorder.lines[0];
  EXPECT_NE(recorder.lines[0].find("DGELU_BGRAD"), std::string::npos) << recorder.lines[0];
  // Another shape is another question, and another line.
  EXPECT_EQ(cache.find(key_of(44), offer_nothing), nullptr);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(recorder.lines.size(), 2u);
}

TEST(GemmPlanCache, OfferedPlanIsKeptAndReusedWithoutLogging) {
  Recorder recorder;
  GemmPlanCache<FakePlan> cache(recorder.log());
  int asked = 0;
  const auto offer = [&](const GemmPlanKey&) {
    ++asked;
    return std::make_unique<FakePlan>(FakePlan{asked});
  };
  FakePlan* first = cache.find(key_of(32), offer);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(cache.find(key_of(32), offer), first);
  EXPECT_EQ(asked, 1);
  // Any field of the key is part of the question: an epilogue, an alignment.
  EXPECT_NE(cache.find(key_of(32, "BGRADB"), offer), first);
  GemmPlanKey misaligned = key_of(32);
  misaligned.alignment_a_bytes = 4;
  EXPECT_NE(cache.find(misaligned, offer), first);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(recorder.lines.empty());
}

TEST(GemmPlanCache, RefusedAtRunTimeTurnsUnfusedLoggedOnceAndKeepsThePlanAlive) {
  Recorder recorder;
  GemmPlanCache<FakePlan> cache(recorder.log());
  int asked = 0;
  const auto offer = [&](const GemmPlanKey&) {
    ++asked;
    return std::make_unique<FakePlan>(FakePlan{7});
  };
  FakePlan* plan = cache.find(key_of(32), offer);
  ASSERT_NE(plan, nullptr);
  cache.refuse(key_of(32), "CUBLAS_STATUS_NOT_SUPPORTED");
  cache.refuse(key_of(32), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(cache.find(key_of(32), offer), nullptr);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(plan->id, 7);  // still owned by the cache
  ASSERT_EQ(recorder.lines.size(), 1u);
  EXPECT_NE(recorder.lines[0].find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos);
}

TEST(OperandAlignment, IsTheLargestPowerOfTwoDividingAddressAndRowStrideBytes) {
  alignas(256) static std::uint8_t buffer[4096];
  // An aligned start with rows of 36 bf16 (72 bytes): every row is 8-byte aligned only.
  EXPECT_EQ(operand_alignment_bytes(buffer, 36, 2), 8u);
  // Rows of 64 f32 (256 bytes) from a 256-byte-aligned start: 256, the most declared.
  EXPECT_EQ(operand_alignment_bytes(buffer, 64, 4), 256u);
  EXPECT_EQ(operand_alignment_bytes(buffer, 1024, 4), 256u);
  // An odd width: 50257 bf16 per row is 2-byte aligned whatever the start.
  EXPECT_EQ(operand_alignment_bytes(buffer, 50257, 2), 2u);
  // The address limits too: a parameter 36 bf16 (72 bytes) into a flat buffer, rows of 64.
  EXPECT_EQ(operand_alignment_bytes(buffer + 72, 64, 2), 8u);
  EXPECT_EQ(operand_alignment_bytes(buffer + 2, 64, 2), 2u);
  EXPECT_EQ(operand_alignment_bytes(buffer + 16, 8, 4), 16u);
}

}  // namespace
}  // namespace zt::nn
