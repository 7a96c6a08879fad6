// checkpoint.init_from's matching and reading: the fixture's GPT-2 tensors fill every
// parameter (Conv1D weights transposed, the vocabulary padded, positions cut), any run of
// elements reads the same values as the whole, and a missing, extra or mis-shaped tensor is
// refused naming the Hugging Face tensor and our parameter.
#include "runtime/checkpoint/hf_import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/engine/model_factory.h"
#include "sharding/flat_layout.h"
#include "support/error_message.h"
#include "support/hf_gpt2_fixture.h"
#include "support/safetensors_writing.h"
#include "support/temp_dir.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

struct TinyModel {
  Config config;
  zero::FlatLayout layout;
  std::vector<ManifestParameter> parameters;
};

TinyModel tiny_model(bool tied) {
  const Config config =
      parse_config_text("", "hf_import_test.toml",
                        {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=16",
                         "model.vocab_size=16", "model.seq_len=8",
                         std::string("model.tie_embeddings=") + (tied ? "true" : "false")});
  TinyModel model{config, zero::make_flat_layout(engine::make_model(config), 1), {}};
  model.parameters = describe_parameters(model.layout);
  return model;
}

HfNaming gpt2_naming(const TinyModel& model) {
  return hf_naming(model.config.model, model.parameters);
}

TEST(HfImport, FillsEveryParameterFromTheTiedFixture) {
  const TinyModel model = tiny_model(true);
  const HfWeights weights(testing::hf_gpt2_fixture("tied"));
  const HfImport import(weights, gpt2_naming(model));
  std::vector<float> all(static_cast<std::size_t>(model.layout.numel), -1.0f);
  import.read(0, model.layout.numel, all.data());
  EXPECT_EQ(all, testing::expected_from_hf(weights, model.parameters, model.layout.numel));
  // The three padding rows of wte are zero, its real rows are not.
  const std::int64_t c = 16;
  for (std::int64_t i = 13 * c; i < 16 * c; ++i) EXPECT_EQ(all[static_cast<std::size_t>(i)], 0.0f);
  EXPECT_NE(all[0], 0.0f);

  // Odd runs (a stage-3 shard's pieces) read the same values as the whole.
  std::vector<float> pieces(all.size(), -1.0f);
  for (std::int64_t begin = 0; begin < model.layout.numel; begin += 37) {
    const std::int64_t count = std::min<std::int64_t>(37, model.layout.numel - begin);
    import.read(begin, count, pieces.data() + begin);
  }
  EXPECT_EQ(pieces, all);
}

TEST(HfImport, ReadsAnF16ShardedSetWithAnUntiedHead) {
  const TinyModel model = tiny_model(false);
  const HfWeights weights(testing::hf_gpt2_fixture("untied_sharded"));
  const HfImport import(weights, gpt2_naming(model));
  std::vector<float> all(static_cast<std::size_t>(model.layout.numel), -1.0f);
  import.read(0, model.layout.numel, all.data());
  EXPECT_EQ(all, testing::expected_from_hf(weights, model.parameters, model.layout.numel));
}

using testing::TensorMap;
using testing::write_safetensors;

TensorMap fixture_tensors() {
  return testing::read_tensors(HfWeights(testing::hf_gpt2_fixture("tied")), "transformer.");
}

std::string refusal(const TensorMap& tensors, bool tied) {
  const testing::TempDir dir;
  write_safetensors(dir / "model.safetensors", tensors);
  const TinyModel model = tiny_model(tied);
  const HfWeights weights(dir / "model.safetensors");
  return testing::message_of<Error>([&] { HfImport(weights, gpt2_naming(model)); });
}

TEST(HfImport, TheUnprefixedFixtureLoadsToo) {
  const testing::TempDir dir;
  write_safetensors(dir / "model.safetensors", fixture_tensors());
  const TinyModel model = tiny_model(true);
  const HfWeights weights(dir / "model.safetensors");
  const HfImport import(weights, gpt2_naming(model));
  std::vector<float> all(static_cast<std::size_t>(model.layout.numel));
  import.read(0, model.layout.numel, all.data());
  EXPECT_EQ(all, testing::expected_from_hf(weights, model.parameters, model.layout.numel));
}

TEST(HfImport, RefusesAMissingTensorNamingBothSides) {
  TensorMap tensors = fixture_tensors();
  tensors.erase("h.1.mlp.c_fc.bias");
  const std::string message = refusal(tensors, true);
  EXPECT_CONTAINS(message,
                  "no tensor 'h.1.mlp.c_fc.bias' for this model's block.1.mlp.fc.bias (64)");
  EXPECT_CONTAINS(message, "model.safetensors");
}

// A file that writes its body under "transformer." (as GPT-2's own does) hears of a missing
// tensor by the name it would have in that file.
TEST(HfImport, NamesAMissingTensorAsTheFileWouldWithItsPrefix) {
  TensorMap tensors = testing::read_tensors(HfWeights(testing::hf_gpt2_fixture("tied")), "");
  ASSERT_EQ(tensors.count("transformer.h.1.mlp.c_fc.bias"), 1u);
  tensors.erase("transformer.h.1.mlp.c_fc.bias");
  EXPECT_CONTAINS(refusal(tensors, true),
                  "no tensor 'transformer.h.1.mlp.c_fc.bias' for this model's "
                  "block.1.mlp.fc.bias (64)");
}

// A NaN or an infinity in the weights is found as they are read, naming the tensor and the
// element, transposed or not.
TEST(HfImport, RefusesANonFiniteWeightNamingTheTensorAndElement) {
  for (const auto& [name, element, value] :
       {std::tuple<std::string, std::size_t, float>{"h.0.ln_1.weight", 3,
                                                    std::numeric_limits<float>::quiet_NaN()},
        {"h.1.attn.c_attn.weight", 17, std::numeric_limits<float>::infinity()}}) {
    TensorMap tensors = fixture_tensors();
    tensors[name].values[element] = value;
    const testing::TempDir dir;
    write_safetensors(dir / "model.safetensors", tensors);
    const TinyModel model = tiny_model(true);
    const HfWeights weights(dir / "model.safetensors");
    const HfImport import(weights, gpt2_naming(model));
    std::vector<float> all(static_cast<std::size_t>(model.layout.numel));
    const std::string message =
        testing::message_of<Error>([&] { import.read(0, model.layout.numel, all.data()); });
    EXPECT_CONTAINS(message, "tensor '" + name + "'");
    EXPECT_CONTAINS(message, std::string(std::isnan(value) ? "holds NaN" : "holds an infinity") +
                                 " at element " + std::to_string(element));
  }
}

TEST(HfImport, RefusesAnExtraTensor) {
  TensorMap tensors = fixture_tensors();
  tensors["h.2.ln_1.weight"] = tensors["h.1.ln_1.weight"];
  const std::string message = refusal(tensors, true);
  EXPECT_CONTAINS(message, "extra tensor 'h.2.ln_1.weight' (16)");
  EXPECT_CONTAINS(message, "model.n_layer");
}

TEST(HfImport, RefusesAMisShapedTensorNamingBothShapes) {
  TensorMap tensors = fixture_tensors();
  tensors["h.0.attn.c_attn.weight"].shape = {48, 16};  // written (out, in): not a Conv1D weight
  std::string message = refusal(tensors, true);
  EXPECT_CONTAINS(message, "'h.0.attn.c_attn.weight' (48, 16)");
  EXPECT_CONTAINS(message, "does not fit this model's block.0.attn.qkv.weight (48, 16)");
  EXPECT_CONTAINS(message, "expected (16, 48), a Conv1D (in, out) weight transposed to ours");

  tensors = fixture_tensors();
  testing::Tensor32& wte = tensors["wte.weight"];
  wte.shape = {20, 16};  // a vocabulary larger than model.vocab_size
  wte.values.resize(20 * 16);
  message = refusal(tensors, true);
  EXPECT_CONTAINS(message, "'wte.weight' (20, 16)");
  EXPECT_CONTAINS(message, "embedding.wte (16, 16): expected (16, 16), or fewer rows");
}

TEST(HfImport, RefusesAHeadTiedOnOneSideOnly) {
  TensorMap tensors = fixture_tensors();
  EXPECT_CONTAINS(refusal(tensors, false),
                  "no tensor 'lm_head.weight' for this model's "
                  "head.lm_head.weight (16, 16); the file ties its head "
                  "to the token embedding: set model.tie_embeddings = true");
  tensors["lm_head.weight"] = tensors["wte.weight"];
  EXPECT_CONTAINS(refusal(tensors, true), "extra tensor 'lm_head.weight' (13, 16)");
  EXPECT_CONTAINS(refusal(tensors, true), "set model.tie_embeddings = false");
}

TEST(HfImport, AnMlpHasNoHuggingFaceNames) {
  EXPECT_CONTAINS(testing::message_of<ConfigError>([] { hf_naming(ModelConfig{}, {}); }),
                  "model.type = \"mlp\" has no Hugging Face counterpart");
}

}  // namespace
}  // namespace zt::checkpoint
