// model.type = "llama" from a config: Llama's defaults filled in (n_kv_head = n_head, Llama's
// ffn_dim), and a shape that cannot be built refused naming where its key was set; Llama's own
// keys refused under another model.type, where they would change nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/config/config_writer.h"
#include "core/error.h"
#include "nn/models/llama.h"
#include "runtime/engine/model_factory.h"

namespace zt::engine {
namespace {

Config llama_config(std::vector<std::string> extra) {
  std::vector<std::string> overrides{"model.type=llama", "model.n_layer=2",     "model.n_head=4",
                                     "model.d_model=64", "model.vocab_size=32", "model.seq_len=16"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "llama_test.toml", overrides);
}

TEST(LlamaModelFactory, DefaultsAreMultiHeadAttentionAndLlamasFfnDim) {
  const nn::Model model = make_model(llama_config({}));
  EXPECT_EQ(model.name(), "llama");
  // n_kv_head = n_head = 4, ffn_dim = 8/3 x 64 rounded up to 256, untied.
  EXPECT_EQ(model.parameter_count(),
            nn::llama_parameter_count({2, 4, 4, 64, 256, 32, 16, 10000.0f, 1e-5f, false}));
  const auto specs = model.block(1).module->parameter_specs();
  EXPECT_EQ(specs[1].shape, (Shape{3 * 64, 64}));  // q, k and v of 4 heads each
  EXPECT_EQ(specs[4].shape, (Shape{2 * 256, 64}));
}

void expect_refused(const std::vector<std::string>& extra, const std::string& start) {
  try {
    (void)make_model(llama_config(extra));
    ADD_FAILURE() << "accepted " << extra.front();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(start, 0), 0u) << message;
  }
}

TEST(LlamaModelFactory, ShapesThatCannotBeBuiltNameTheOverride) {
  expect_refused({"model.n_kv_head=3"}, "--set model.n_kv_head=3: model.n_kv_head = 3 must divide");
  // 64 heads of 64 channels: a head of 1, which rotary embeddings cannot pair.
  expect_refused({"model.n_head=64"}, "--set model.d_model=64: model.d_model / model.n_head = 1");
  expect_refused({"model.ffn_dim=-1"}, "--set model.ffn_dim=-1");
}

TEST(LlamaModelFactory, LlamasKeysUnderAnotherModelTypeAreRefusedNamingTheKey) {
  for (const std::string type : {"gpt", "mlp"}) {
    for (const std::string setting : {"model.n_kv_head=2", "model.ffn_dim=128",
                                      "model.rope_theta=500000", "model.norm_eps=0.001"}) {
      const Config config = parse_config_text(
          "", "gpt_test.toml",
          {"model.type=" + type, "model.n_layer=1", "model.n_head=4", "model.d_model=64",
           "model.vocab_size=32", "model.seq_len=16", setting});
      try {
        (void)make_model(config);
        ADD_FAILURE() << "model.type = " << type << " accepted " << setting;
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        const std::string key = setting.substr(0, setting.find('='));
        EXPECT_EQ(message.rfind("--set " + setting + ": " + key + " = ", 0), 0u) << message;
        EXPECT_NE(
            message.find("shapes model.type = \"llama\" only, but model.type = \"" + type + "\""),
            std::string::npos)
            << message;
      }
    }
  }
}

TEST(LlamaModelFactory, AGptRunsWrittenConfigWithLlamasDefaultsLoadsAgain) {
  const Config config =
      parse_config_text("", "gpt_test.toml",
                        {"model.type=gpt", "model.n_layer=1", "model.n_head=4", "model.d_model=64",
                         "model.vocab_size=32", "model.seq_len=16"});
  const Config again = parse_config_text(config_to_toml(config), "config.toml", {});
  EXPECT_EQ(make_model(again).parameter_count(), make_model(config).parameter_count());
}

}  // namespace
}  // namespace zt::engine
