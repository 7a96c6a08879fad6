// checkpoint.init_from for Llama: the fixture's q/k/v and gate/up tensors stack into our
// fused qkv and SwiGLU fc by rows, as they are (Note [Hugging Face names]); the model loaded
// from them gives the logits of a numpy forward that follows transformers' rotate_half, which
// rows permuted as Meta's interleaved pairs would not; a missing, extra or mis-shaped tensor
// is refused naming both sides; and config.json is checked against model.* (Note [Hugging
// Face config]), an export's own config.json passing that check.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "core/config/config_loader.h"
#include "core/error.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/checkpoint/hf_import.h"
#include "runtime/engine/model_factory.h"
#include "runtime/generate/decoder.h"
#include "sharding/flat_layout.h"
#include "support/error_message.h"
#include "support/hf_llama_fixture.h"
#include "support/safetensors_writing.h"
#include "support/temp_dir.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::TensorMap;

struct TinyModel {
  Config config;
  nn::Model model;
  zero::FlatLayout layout;
  std::vector<ManifestParameter> parameters;
};

// The top-level fixture's model (configs/llama-tiny.toml's), or with `untied` the sharded
// one's (tiny_llama_overrides' with a separate head).
TinyModel tiny_model(bool untied, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> overrides = testing::llama_tiny_model_overrides();
  if (untied) {
    overrides.insert(overrides.end(), {"model.n_head=2", "model.n_kv_head=1", "model.d_model=16",
                                       "model.ffn_dim=24", "model.vocab_size=16", "model.seq_len=8",
                                       "model.rope_theta=500000", "model.tie_embeddings=false"});
  }
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  Config config = parse_config_text("", "hf_llama_import_test.toml", overrides);
  nn::Model model = engine::make_model(config);
  zero::FlatLayout layout = zero::make_flat_layout(model, 1);
  std::vector<ManifestParameter> parameters = describe_parameters(layout);
  return {std::move(config), std::move(model), std::move(layout), std::move(parameters)};
}

std::vector<float> read_all(const HfWeights& weights, const TinyModel& model) {
  const HfImport import(weights, hf_naming(model.config.model, model.parameters));
  std::vector<float> all(static_cast<std::size_t>(model.layout.numel), -1.0f);
  import.read(0, model.layout.numel, all.data());
  return all;
}

const ManifestParameter& parameter(const TinyModel& model, const std::string& name) {
  for (const ManifestParameter& p : model.parameters) {
    if (p.name == name) return p;
  }
  throw InternalError("no parameter " + name);
}

TEST(HfLlamaImport, StacksQkvAndGateUpByRowsFromTheTiedFixture) {
  const TinyModel model = tiny_model(false);
  const HfWeights weights(testing::hf_llama_fixture());
  const std::vector<float> all = read_all(weights, model);
  EXPECT_EQ(all, testing::expected_from_hf_llama(weights, model.parameters, model.layout.numel));

  // Spelled out for block 1: qkv's row 0 is q_proj's row 0, row 64 k_proj's, row 96
  // v_proj's (4 query heads, 2 key/value heads of 16); fc's row 128 is up_proj's row 0.
  const TensorMap hf = testing::read_tensors(weights, "model.");
  const std::int64_t qkv = parameter(model, "block.1.attn.qkv.weight").offset;
  const std::int64_t fc = parameter(model, "block.1.mlp.fc.weight").offset;
  for (std::int64_t c = 0; c < 64; ++c) {
    const auto at = [&](std::int64_t i) { return all[static_cast<std::size_t>(i)]; };
    const auto hf_at = [&](const std::string& name, std::int64_t i) {
      return hf.at(name).values[static_cast<std::size_t>(i)];
    };
    EXPECT_EQ(at(qkv + c), hf_at("layers.1.self_attn.q_proj.weight", c));
    EXPECT_EQ(at(qkv + 64 * 64 + c), hf_at("layers.1.self_attn.k_proj.weight", c));
    EXPECT_EQ(at(qkv + 96 * 64 + c), hf_at("layers.1.self_attn.v_proj.weight", c));
    EXPECT_EQ(at(fc + c), hf_at("layers.1.mlp.gate_proj.weight", c));
    EXPECT_EQ(at(fc + 128 * 64 + c), hf_at("layers.1.mlp.up_proj.weight", c));
  }

  // Odd runs (a stage-3 shard's pieces) read the same values as the whole.
  const HfImport import(weights, hf_naming(model.config.model, model.parameters));
  std::vector<float> pieces(all.size(), -1.0f);
  for (std::int64_t begin = 0; begin < model.layout.numel; begin += 1009) {
    const std::int64_t count = std::min<std::int64_t>(1009, model.layout.numel - begin);
    import.read(begin, count, pieces.data() + begin);
  }
  EXPECT_EQ(pieces, all);
}

TEST(HfLlamaImport, ReadsTheUntiedShardedSetPaddingEmbeddingAndHead) {
  const TinyModel model = tiny_model(true);
  const HfWeights weights(testing::hf_llama_fixture("untied_sharded"));
  const std::vector<float> all = read_all(weights, model);
  EXPECT_EQ(all, testing::expected_from_hf_llama(weights, model.parameters, model.layout.numel));
  for (const char* name : {"embedding.wte", "head.lm_head.weight"}) {
    const std::int64_t offset = parameter(model, name).offset;
    for (std::int64_t i = 13 * 16; i < 16 * 16; ++i) {
      EXPECT_EQ(all[static_cast<std::size_t>(offset + i)], 0.0f) << name << " padding";
    }
    EXPECT_NE(all[static_cast<std::size_t>(offset)], 0.0f) << name;
  }
}

// The logits after the fixture's tokens from the model holding `values`.
std::vector<float> logits_of(TinyModel& model, const std::vector<float>& values,
                             const std::vector<std::int32_t>& tokens) {
  MemoryTracker tracker(Device::cpu());
  const std::unique_ptr<DeviceContext> device = make_cpu_device_context(tracker);
  const generate::ModelWeights weights(model.model, values, DType::kF32, *device);
  generate::Decoder decoder(model.model, weights, *device, model.config.model.seq_len);
  return decoder.full_forward(tokens);
}

TEST(HfLlamaImport, TheLoadedModelGivesTheLogitsOfHuggingFacesRotaryPairs) {
  TinyModel model = tiny_model(false);
  const std::vector<float> values = read_all(HfWeights(testing::hf_llama_fixture()), model);
  const TensorMap reference = testing::read_tensors(
      HfWeights(testing::hf_llama_fixture() / "numpy_reference.safetensors"), "");
  std::vector<std::int32_t> tokens;
  for (const float token : reference.at("tokens").values) {
    tokens.push_back(static_cast<std::int32_t>(token));
  }
  const std::vector<float>& expected = reference.at("logits").values;
  const std::vector<float> logits = logits_of(model, values, tokens);
  ASSERT_EQ(logits.size(), expected.size());
  for (std::size_t v = 0; v < logits.size(); ++v) {
    EXPECT_NEAR(logits[v], expected[v], 1e-4) << "logit " << v;
  }

  // q and k rows taken as Meta's interleaved pairs (row 2i of a head = Hugging Face's row i,
  // row 2i+1 its row i + 8) turn other pairs: the logits move well past the tolerance.
  std::vector<float> interleaved = values;
  for (const char* name : {"block.0.attn.qkv.weight", "block.1.attn.qkv.weight"}) {
    const std::int64_t offset = parameter(model, name).offset;
    for (std::int64_t head = 0; head < 4 + 2; ++head) {  // q's 4 heads, then k's 2
      for (std::int64_t i = 0; i < 8; ++i) {
        for (std::int64_t c = 0; c < 64; ++c) {
          const auto row = [&](std::int64_t r) {
            return static_cast<std::size_t>(offset + (head * 16 + r) * 64 + c);
          };
          interleaved[row(2 * i)] = values[row(i)];
          interleaved[row(2 * i + 1)] = values[row(i + 8)];
        }
      }
    }
  }
  const std::vector<float> wrong = logits_of(model, interleaved, tokens);
  double largest = 0;
  for (std::size_t v = 0; v < wrong.size(); ++v) {
    largest = std::max(largest, static_cast<double>(std::abs(wrong[v] - expected[v])));
  }
  EXPECT_GT(largest, 1e-2);
}

std::string refusal(const TensorMap& tensors, bool untied = false) {
  const testing::TempDir dir;
  testing::write_safetensors(dir / "model.safetensors", tensors);
  const TinyModel model = tiny_model(untied);
  const HfWeights weights(dir / "model.safetensors");
  return testing::message_of<Error>(
      [&] { HfImport(weights, hf_naming(model.config.model, model.parameters)); });
}

TensorMap fixture_tensors() {
  return testing::read_tensors(HfWeights(testing::hf_llama_fixture()), "model.");
}

TEST(HfLlamaImport, RefusesAMissingTensorNamingBothSides) {
  TensorMap tensors = fixture_tensors();
  tensors.erase("layers.1.self_attn.k_proj.weight");
  EXPECT_CONTAINS(refusal(tensors),
                  "no tensor 'layers.1.self_attn.k_proj.weight' for this "
                  "model's block.1.attn.qkv.weight (128, 64)");
}

TEST(HfLlamaImport, RefusesAnExtraTensor) {
  TensorMap tensors = fixture_tensors();
  tensors["layers.2.input_layernorm.weight"] = tensors["layers.1.input_layernorm.weight"];
  const std::string message = refusal(tensors);
  EXPECT_CONTAINS(message, "extra tensor 'layers.2.input_layernorm.weight' (64)");
  EXPECT_CONTAINS(message, "model.n_layer");
  // The tied model and a head in the file, without a config.json declaring the tie.
  tensors = fixture_tensors();
  tensors["lm_head.weight"] = tensors["embed_tokens.weight"];
  EXPECT_CONTAINS(refusal(tensors), "extra tensor 'lm_head.weight' (32, 64)");
}

TEST(HfLlamaImport, RefusesAMisShapedPartNamingItsRows) {
  // k_proj with a row per query head: weights made without grouped-query attention.
  TensorMap tensors = fixture_tensors();
  testing::Tensor32& k = tensors["layers.0.self_attn.k_proj.weight"];
  k.shape = {64, 64};
  k.values.resize(64 * 64);
  EXPECT_CONTAINS(refusal(tensors), "'layers.0.self_attn.k_proj.weight' (64, 64) in '");
  EXPECT_CONTAINS(refusal(tensors),
                  "does not fit this model's block.0.attn.qkv.weight (128, 64): expected (32, "
                  "64), rows 64..95 of ours (2 of 3 parts stacked by rows)");
  tensors = fixture_tensors();
  tensors["layers.1.mlp.up_proj.weight"].shape = {64, 128};  // (in, out)
  EXPECT_CONTAINS(refusal(tensors), "expected (128, 64), rows 128..255 of ours (2 of 2 parts");
}

// A config.json: the fixture's with `key` set to the JSON `value` ("" removes it).
fs::path edited_config(const testing::TempDir& dir, const std::string& key,
                       const std::string& value) {
  std::ifstream in(testing::hf_llama_fixture() / "config.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("\"" + key + "\":");
  if (at != std::string::npos) {
    const std::size_t end = text.find('\n', at);
    text.replace(at, end - at,
                 value.empty() ? "\"removed\": 0," : "\"" + key + "\": " + value + ",");
  } else {
    text.insert(2, "  \"" + key + "\": " + value + ",\n");
  }
  // The last member has no comma: the file ends with "torch_dtype".
  std::ofstream(dir / "config.json") << text;
  return dir / "config.json";
}

std::string config_refusal(const std::string& key, const std::string& value,
                           const std::vector<std::string>& extra = {}) {
  const testing::TempDir dir;
  const fs::path path = edited_config(dir, key, value);
  const TinyModel model = tiny_model(false, extra);
  return testing::message_of<ConfigError>([&] { check_hf_config(model.config, path); });
}

TEST(HfLlamaConfig, TheFixturesConfigAgreesWithItsModel) {
  EXPECT_NO_THROW(
      check_hf_config(tiny_model(false).config, testing::hf_llama_fixture() / "config.json"));
  EXPECT_NO_THROW(check_hf_config(tiny_model(true).config,
                                  testing::hf_llama_fixture("untied_sharded") / "config.json"));
  EXPECT_EQ(hf_config_beside(testing::hf_llama_fixture() / "model.safetensors"),
            testing::hf_llama_fixture() / "config.json");
  EXPECT_EQ(hf_config_beside(testing::hf_llama_fixture("nothing/model.safetensors")), std::nullopt);
}

TEST(HfLlamaConfig, RefusesARopeThetaMismatchNamingBothSides) {
  const std::string message = config_refusal("rope_theta", "500000.0");
  EXPECT_CONTAINS(message,
                  "config.json': rope_theta = 500000, but model.rope_theta = 10000 "
                  "(--set model.rope_theta=10000)");
  EXPECT_CONTAINS(config_refusal("rope_theta", "", {"model.rope_theta=500000"}),
                  "rope_theta = 10000, but model.rope_theta = 500000")
      << "absent: transformers' default 10000";
}

TEST(HfLlamaConfig, RefusesAnyRopeScaling) {
  EXPECT_CONTAINS(config_refusal("rope_scaling", R"({"rope_type": "llama3", "factor": 8.0})"),
                  "config.json': rope_scaling is set, but this project implements no rotary "
                  "scaling");
  EXPECT_CONTAINS(
      config_refusal("rope_parameters", R"({"rope_theta": 10000.0, "rope_type": "yarn"})"),
      "rope_parameters.rope_type = \"yarn\"");
}

TEST(HfLlamaConfig, RefusesAnotherShape) {
  EXPECT_CONTAINS(config_refusal("num_key_value_heads", "4"),
                  "num_key_value_heads = 4, but model.n_kv_head = 2");
  EXPECT_CONTAINS(config_refusal("num_key_value_heads", ""),
                  "num_key_value_heads = 4, but model.n_kv_head = 2")
      << "absent: as many as the query heads";
  EXPECT_CONTAINS(config_refusal("hidden_size", "128"),
                  "hidden_size = 128, but model.d_model = 64");
  EXPECT_CONTAINS(config_refusal("intermediate_size", "256"),
                  "intermediate_size = 256, but model.ffn_dim = 128");
  EXPECT_CONTAINS(config_refusal("rms_norm_eps", "1e-06"),
                  "rms_norm_eps = 1e-06, but model.norm_eps = 1e-05");
  EXPECT_CONTAINS(config_refusal("tie_word_embeddings", "false"),
                  "tie_word_embeddings = false, but model.tie_embeddings = true");
  EXPECT_CONTAINS(config_refusal("model_type", "\"mistral\""),
                  "model_type = \"mistral\", but model.type = \"llama\" loads Hugging Face's "
                  "\"llama\" weights");
  EXPECT_CONTAINS(config_refusal("hidden_act", "\"gelu\""), "hidden_act = \"gelu\"");
  EXPECT_CONTAINS(config_refusal("attention_bias", "true"),
                  "attention_bias = true, but this project's Llama has no biases in the "
                  "attention's q/k/v/o projections; load weights made without them");
  EXPECT_CONTAINS(config_refusal("mlp_bias", "true"),
                  "mlp_bias = true, but this project's Llama has no biases in the MLP's");
}

TEST(HfLlamaConfig, AnExportsConfigPassesTheCheckForBothFamilies) {
  for (const bool llama : {true, false}) {
    SCOPED_TRACE(llama ? "llama" : "gpt");
    const TinyModel model = tiny_model(
        false,
        llama ? std::vector<std::string>{"model.ffn_dim=0"}
              : std::vector<std::string>{"model.type=gpt", "model.n_kv_head=0", "model.ffn_dim=0"});
    const testing::TempDir dir;
    std::ofstream(dir / "config.json") << hf_config_text(model.config.model, "float32", {});
    EXPECT_NO_THROW(check_hf_config(model.config, dir / "config.json"));
    // And differs from another model's.
    const TinyModel other = tiny_model(false, {"model.n_layer=3"});
    if (llama) {
      EXPECT_CONTAINS(testing::message_of<ConfigError>(
                          [&] { check_hf_config(other.config, dir / "config.json"); }),
                      "num_hidden_layers = 2, but model.n_layer = 3");
    }
  }
}

TEST(HfLlamaConfig, RefusesAGpt2ConfigWithFewerPositionsThanTheContext) {
  const testing::TempDir dir;
  std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4,
    "n_layer": 2, "n_positions": 16})";
  const TinyModel model =
      tiny_model(false, {"model.type=gpt", "model.n_kv_head=0", "model.ffn_dim=0"});
  EXPECT_CONTAINS(
      testing::message_of<ConfigError>([&] { check_hf_config(model.config, dir / "config.json"); }),
      "n_positions = 16, fewer than model.seq_len = 32");
}

}  // namespace
}  // namespace zt::checkpoint
