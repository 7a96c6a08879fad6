// The attention kernels a run keeps, decided before step 1 from cuDNN's check of the run's
// graphs (Note [cuDNN attention never ends a run]), and the collectives backend decided from
// whether libnccl.so.2 opens: checked_attention and available_comm_backend with the checks
// injected, so that cuDNN's and NCCL's answers are the test's.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "nn/kernels/kernel_backend.h"
#include "runtime/engine/device_selection.h"
#include "tests/support/error_message.h"

namespace zt::engine {
namespace {

Config gpt_with(std::vector<std::string> overrides) {
  std::vector<std::string> all{
      "model.type=gpt",           "model.n_layer=2",     "model.n_head=4",
      "model.d_model=64",         "model.vocab_size=64", "model.seq_len=32",
      "train.micro_batch_size=3", "runtime.device=cuda", "precision.dtype=bf16"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return parse_config_text("", "test.toml", all);
}

// A stand-in for cuDNN that counts its calls and answers `refusal`.
struct FakeCudnn {
  std::optional<std::string> refusal;
  int calls = 0;
  CudnnAttentionCheck check() {
    return [this] {
      ++calls;
      return refusal;
    };
  }
};

constexpr const char* kRefusal =
    "cuDNN frontend check_support failed: no engine for the causal band";

TEST(AttentionPrecheck, ExplicitCudnnThatCudnnRefusesIsAConfigErrorWithItsReason) {
  if (!nn::cudnn_attention_built()) GTEST_SKIP() << "built without the cuDNN attention";
  FakeCudnn cudnn{kRefusal};
  const std::string message = testing::message_of<ConfigError>(
      [&] { checked_attention(gpt_with({"runtime.attention=cudnn"}), cudnn.check()); });
  EXPECT_CONTAINS(message, "runtime.attention");
  EXPECT_CONTAINS(message, kRefusal);
  EXPECT_CONTAINS(message, "runtime.attention = \"rows\"");
  EXPECT_EQ(cudnn.calls, 1);
}

TEST(AttentionPrecheck, ExplicitCudnnThatCudnnTakesRunsCudnnWithoutAWarning) {
  if (!nn::cudnn_attention_built()) GTEST_SKIP() << "built without the cuDNN attention";
  FakeCudnn cudnn{std::nullopt};
  const AttentionChoice choice =
      checked_attention(gpt_with({"runtime.attention=cudnn"}), cudnn.check());
  EXPECT_EQ(choice.attention, nn::CudaAttention::kCudnn);
  EXPECT_FALSE(choice.warning);
  EXPECT_EQ(cudnn.calls, 1);
}

TEST(AttentionPrecheck, AutoThatTriesCudnnFallsBackToRowsWithOneWarningSayingWhy) {
  FakeCudnn cudnn{kRefusal};
  const AttentionChoice choice =
      checked_attention(gpt_with({}), cudnn.check(), AutoAttention::kCudnnWhenChecked);
  EXPECT_EQ(choice.attention, nn::CudaAttention::kRows);
  ASSERT_TRUE(choice.warning);
  EXPECT_CONTAINS(*choice.warning, "runtime.attention = \"auto\" runs the rows attention");
  EXPECT_CONTAINS(*choice.warning, kRefusal);
  EXPECT_EQ(cudnn.calls, 1);
}

TEST(AttentionPrecheck, AutoThatTriesCudnnRunsCudnnWhereTheCheckPasses) {
  FakeCudnn cudnn{std::nullopt};
  const AttentionChoice choice =
      checked_attention(gpt_with({}), cudnn.check(), AutoAttention::kCudnnWhenChecked);
  EXPECT_EQ(choice.attention, nn::CudaAttention::kCudnn);
  EXPECT_FALSE(choice.warning);
}

TEST(AttentionPrecheck, AutoAsThisZerotrainDefinesItRunsRowsWithoutAskingCudnn) {
  // Note [Attention default]: auto stays rows until cuDNN's attention has run on a GPU.
  FakeCudnn cudnn{std::nullopt};
  const AttentionChoice choice = checked_attention(gpt_with({}), cudnn.check());
  EXPECT_EQ(choice.attention, nn::CudaAttention::kRows);
  EXPECT_FALSE(choice.warning);
  EXPECT_EQ(cudnn.calls, 0);
}

TEST(AttentionPrecheck, CudnnIsNotAskedWhereItCouldNotRun) {
  FakeCudnn cudnn{kRefusal};
  for (const std::vector<std::string>& overrides : std::vector<std::vector<std::string>>{
           {"precision.dtype=fp32"}, {"runtime.device=cpu"}, {"runtime.attention=rows"}}) {
    const AttentionChoice choice =
        checked_attention(gpt_with(overrides), cudnn.check(), AutoAttention::kCudnnWhenChecked);
    EXPECT_EQ(choice.attention, nn::CudaAttention::kRows) << overrides[0];
    EXPECT_FALSE(choice.warning) << overrides[0];
  }
  EXPECT_EQ(cudnn.calls, 0);
}

// Note [Dropout keeps the project's attention]: cuDNN cannot draw zerotrain's dropout masks.
TEST(AttentionPrecheck, ExplicitCudnnWithDropoutIsAConfigErrorNamingBothKeys) {
  FakeCudnn cudnn{std::nullopt};
  const Config config = gpt_with({"runtime.attention=cudnn", "model.dropout=0.1"});
  for (const std::string& message :
       {testing::message_of<ConfigError>([&] { resolved_attention(config); }),
        testing::message_of<ConfigError>([&] { checked_attention(config, cudnn.check()); })}) {
    EXPECT_CONTAINS(message, "runtime.attention = \"cudnn\"");
    EXPECT_CONTAINS(message, "model.dropout = 0.1");
    EXPECT_CONTAINS(message, "--set model.dropout=0.1");  // where it was set
    EXPECT_CONTAINS(message, "runtime.attention = \"rows\"");
  }
  EXPECT_EQ(cudnn.calls, 0);
}

TEST(AttentionPrecheck, AutoWithDropoutRunsRowsWithoutAskingCudnn) {
  FakeCudnn cudnn{std::nullopt};
  const Config config = gpt_with({"model.dropout=0.1"});
  const AttentionChoice tried =
      checked_attention(config, cudnn.check(), AutoAttention::kCudnnWhenChecked);
  EXPECT_EQ(tried.attention, nn::CudaAttention::kRows);
  ASSERT_TRUE(tried.warning);
  EXPECT_CONTAINS(*tried.warning, "runtime.attention = \"auto\" runs the rows attention");
  EXPECT_CONTAINS(*tried.warning, "model.dropout = 0.1");
  const AttentionChoice as_defined = checked_attention(config, cudnn.check());
  EXPECT_EQ(as_defined.attention, nn::CudaAttention::kRows);
  EXPECT_FALSE(as_defined.warning);
  EXPECT_EQ(cudnn.calls, 0);
  // model.dropout = 0 leaves cuDNN to its check.
  EXPECT_EQ(checked_attention(gpt_with({"model.dropout=0"}), cudnn.check(),
                              AutoAttention::kCudnnWhenChecked)
                .attention,
            nn::CudaAttention::kCudnn);
}

TEST(AttentionPrecheck, TheCheckedShapeIsATrainingStepsAttention) {
  const nn::AttentionShape shape = training_attention_shape(gpt_with({}));
  EXPECT_EQ(shape.batch, 3);
  EXPECT_EQ(shape.seq_len, 32);
  EXPECT_EQ(shape.kv_len, 32);
  EXPECT_EQ(shape.n_head, 4);
  EXPECT_EQ(shape.n_kv_head, 4);  // GPT: every head has its keys
  EXPECT_EQ(shape.head_dim, 16);
  const nn::AttentionShape grouped = training_attention_shape(
      gpt_with({"model.type=llama", "model.n_kv_head=2", "model.ffn_dim=128"}));
  EXPECT_EQ(grouped.n_kv_head, 2);
}

TEST(NcclAvailability, AutoWithoutLibncclMovesTensorsWithGlooAndSaysWhy) {
  if (!comm::nccl_backend_built()) GTEST_SKIP() << "built without NCCL";
  int calls = 0;
  const CommChoice choice = available_comm_backend(gpt_with({}), [&] {
    ++calls;
    return std::optional<std::string>("libnccl.so.2: cannot open shared object file");
  });
  EXPECT_EQ(choice.backend, CommBackendKind::kGloo);
  ASSERT_TRUE(choice.warning);
  EXPECT_CONTAINS(*choice.warning, "comm.backend = \"auto\"");
  EXPECT_CONTAINS(*choice.warning, "libnccl.so.2");
  EXPECT_EQ(calls, 1);
}

TEST(NcclAvailability, ExplicitNcclWithoutLibncclIsAConfigErrorNamingKeyAndLibrary) {
  if (!comm::nccl_backend_built()) GTEST_SKIP() << "built without NCCL";
  const std::string message = testing::message_of<ConfigError>([] {
    available_comm_backend(gpt_with({"comm.backend=nccl"}), [] {
      return std::optional<std::string>("libnccl.so.2: cannot open shared object file");
    });
  });
  EXPECT_CONTAINS(message, "comm.backend");
  EXPECT_CONTAINS(message, "libnccl.so.2");
  EXPECT_CONTAINS(message, "comm.backend = \"gloo\"");
}

TEST(NcclAvailability, NcclThatOpensIsKeptAndGlooIsNeverChecked) {
  if (!comm::nccl_backend_built()) GTEST_SKIP() << "built without NCCL";
  const auto opens = [] { return std::optional<std::string>(); };
  EXPECT_EQ(available_comm_backend(gpt_with({}), opens).backend, CommBackendKind::kNccl);
  int calls = 0;
  const CommChoice gloo = available_comm_backend(gpt_with({"comm.backend=gloo"}), [&] {
    ++calls;
    return std::optional<std::string>("unused");
  });
  EXPECT_EQ(gloo.backend, CommBackendKind::kGloo);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace zt::engine
