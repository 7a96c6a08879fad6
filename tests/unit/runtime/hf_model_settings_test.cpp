// hf_model_settings reads a Hugging Face config.json back into model.*: the model it makes is
// the one check_hf_config accepts for those weights, and an export's config.json gives back
// the model it was written from.
#include "runtime/checkpoint/hf_model_settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/checkpoint/hf_config.h"
#include "support/error_message.h"
#include "support/hf_llama_fixture.h"
#include "support/temp_dir.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

Config config_of(const std::vector<std::string>& settings) {
  return parse_config_text("", "config.json", settings);
}

TEST(HfModelSettings, TheLlamaFixturesConfigGivesTheModelItsWeightsWereMadeFor) {
  const fs::path json = testing::hf_llama_fixture() / "config.json";
  const Config config = config_of(hf_model_settings(json));
  const ModelConfig& m = config.model;
  EXPECT_EQ(m.type, ModelType::kLlama);
  EXPECT_EQ(m.d_model, 64);
  EXPECT_EQ(m.n_head, 4);
  EXPECT_EQ(m.n_kv_head, 2);
  EXPECT_EQ(m.n_layer, 2);
  EXPECT_EQ(m.ffn_dim, 128);
  EXPECT_EQ(m.vocab_size, 32);
  EXPECT_EQ(m.seq_len, 32);  // max_position_embeddings, below kDefaultHfSeqLen
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(m.rope_theta, 10000.0);
  EXPECT_TRUE(m.tie_embeddings);
  EXPECT_NO_THROW(check_hf_config(config, json));
}

// GPT-2 and Llama models as an export describes them come back key for key; a long context
// is cut to kDefaultHfSeqLen.
TEST(HfModelSettings, AnExportsConfigJsonGivesBackItsModel) {
  testing::TempDir dir;
  for (const bool llama : {false, true}) {
    ModelConfig model;
    model.type = llama ? ModelType::kLlama : ModelType::kGpt;
    model.n_layer = 3;
    model.n_head = 4;
    model.d_model = 64;
    model.vocab_size = 96;
    model.seq_len = llama ? 4096 : 256;
    model.tie_embeddings = !llama;
    if (llama) {
      model.n_kv_head = 2;
      model.ffn_dim = 160;
      model.rope_theta = 500000.0;
      model.norm_eps = 1e-5;
    }
    const fs::path json = dir / (llama ? "llama.json" : "gpt2.json");
    std::ofstream(json) << hf_config_text(model, "float32", {});
    const Config config = config_of(hf_model_settings(json));
    EXPECT_EQ(config.model.type, model.type);
    EXPECT_EQ(config.model.n_layer, 3);
    EXPECT_EQ(config.model.n_head, 4);
    EXPECT_EQ(config.model.d_model, 64);
    EXPECT_EQ(config.model.vocab_size, 96);
    EXPECT_EQ(config.model.seq_len, llama ? kDefaultHfSeqLen : 256);
    EXPECT_EQ(config.model.tie_embeddings, model.tie_embeddings);
    if (llama) {
      EXPECT_EQ(config.model.n_kv_head, 2);
      EXPECT_EQ(config.model.ffn_dim, 160);
      EXPECT_DOUBLE_EQ(config.model.rope_theta, 500000.0);
      EXPECT_DOUBLE_EQ(config.model.norm_eps, 1e-5);
    }
    EXPECT_NO_THROW(check_hf_config(config, json));
  }
}

TEST(HfModelSettings, AnotherModelTypeOrAMissingShapeKeyIsNamedWithTheFile) {
  testing::TempDir dir;
  const fs::path bert = dir / "bert.json";
  std::ofstream(bert) << R"({"model_type": "bert", "hidden_size": 8})";
  const std::string other =
      testing::message_of<ConfigError>([&] { (void)hf_model_settings(bert); });
  EXPECT_NE(other.find(bert.string()), std::string::npos) << other;
  EXPECT_NE(other.find("\"bert\""), std::string::npos) << other;

  const fs::path partial = dir / "partial.json";
  std::ofstream(partial) << R"({"model_type": "gpt2", "n_embd": 8, "n_head": 2})";
  const std::string missing =
      testing::message_of<ConfigError>([&] { (void)hf_model_settings(partial); });
  EXPECT_NE(missing.find("n_layer"), std::string::npos) << missing;
  EXPECT_NE(missing.find(partial.string()), std::string::npos) << missing;
}

TEST(HfModelSettings, AFolderIsOneWithConfigJsonBesideItsWeights) {
  EXPECT_TRUE(is_hf_folder(testing::hf_llama_fixture()));
  EXPECT_TRUE(is_hf_folder(testing::hf_llama_fixture() / "untied_sharded"));
  testing::TempDir dir;
  EXPECT_FALSE(is_hf_folder(dir.path()));
  std::ofstream(dir / "config.json") << "{}";
  EXPECT_FALSE(is_hf_folder(dir.path()));  // no weights
  std::ofstream(dir / "model.safetensors") << "";
  EXPECT_TRUE(is_hf_folder(dir.path()));
  std::ofstream(dir / "manifest.toml") << "";
  EXPECT_FALSE(is_hf_folder(dir.path()));  // a checkpoint that holds a config.json
}

}  // namespace
}  // namespace zt::checkpoint
