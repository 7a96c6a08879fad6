// checkpoint.init_from of Hugging Face Llama weights on 2 ranks as threads: the fixture fills
// every parameter at ZeRO stages 0 and 3 (stage 3 reading only its shard) with the same first
// loss; an export under Hugging Face names (qkv and fc split back into their tensors, with a
// config.json) loads back bit for bit; a copy of a tied head is skipped only when config.json
// declares the tie; and a config.json that disagrees with model.* stops every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/dtype.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_training.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/hf_config.h"
#include "runtime/checkpoint/hf_export.h"
#include "runtime/checkpoint/hf_weights.h"
#include "runtime/engine/trainer.h"
#include "support/byte_level_tokenizer.h"
#include "support/hf_llama_fixture.h"
#include "support/program_run.h"
#include "support/safetensors_writing.h"
#include "support/temp_dir.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int kWorld = 2;

// The tied fixture's model (configs/llama-tiny.toml's), or with `tiny_untied` the multirank
// tests' tiny Llama with a separate head.
Config config_for(int stage, bool tiny_untied, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_llama_overrides();
  if (tiny_untied) {
    overrides.push_back("model.tie_embeddings=false");
  } else {
    const std::vector<std::string> model = testing::llama_tiny_model_overrides();
    overrides.insert(overrides.end(), model.begin(), model.end());
  }
  overrides.insert(overrides.end(),
                   {"train.steps=2", "train.global_batch_size=8", "train.micro_batch_size=4",
                    "zero.stage=" + std::to_string(stage)});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "hf_llama_init_test.toml", overrides);
}

using Outcome = testing::InitializedTraining;

Outcome train(const Config& config) { return testing::train_from_initialization(kWorld, config); }

// Every rank's error when building the trainer for `config`; they must all fail.
std::vector<std::string> refusals(const Config& config) {
  comm::MemoryStore store;
  const std::vector<std::exception_ptr> errors = testing::run_ranks_collect(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, kWorld, {});
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
  });
  std::vector<std::string> messages;
  for (const std::exception_ptr& error : errors) {
    try {
      if (error) std::rethrow_exception(error);
      messages.emplace_back("no error");
    } catch (const Error& e) {
      messages.emplace_back(e.what());
    }
  }
  return messages;
}

class HfLlamaInit : public ::testing::TestWithParam<int> {};

TEST_P(HfLlamaInit, EveryParameterHoldsTheFixturesValuesAndTheFirstLossAgrees) {
  const int stage = GetParam();
  const fs::path fixture = testing::hf_llama_fixture();
  const std::string init_from = "checkpoint.init_from=" + fixture.string();
  const Outcome loaded = train(config_for(stage, false, {init_from, "train.steps=1"}));
  const checkpoint::HfWeights weights(fixture);
  EXPECT_EQ(loaded.initial,
            testing::expected_from_hf_llama(weights, loaded.parameters, loaded.numel))
      << "stage " << stage;

  const Outcome reference = train(config_for(0, false, {init_from, "train.steps=1"}));
  const Outcome random = train(config_for(stage, false, {"train.steps=1"}));
  ASSERT_FALSE(loaded.losses.empty());
  EXPECT_NEAR(loaded.losses[0], reference.losses[0], 1e-5 * std::abs(reference.losses[0]));
  EXPECT_GT(std::abs(loaded.losses[0] - random.losses[0]), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Stages, HfLlamaInit, ::testing::Values(0, 3),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "Stage" + std::to_string(param_info.param);
                         });

class HfLlamaExport : public ::testing::TestWithParam<int> {};

// A checkpoint exported under Hugging Face names and loaded with init_from gives its weights
// back bit for bit (an untied head, so every Llama name is written and read, and the
// export's config.json is checked on the way in).
TEST_P(HfLlamaExport, InitFromTheExportGivesTheCheckpointsWeightsBitwise) {
  const int stage = GetParam();
  const testing::TempDir dir;
  const std::vector<std::string> paths{"checkpoint.dir=" + (dir / "checkpoints").string(),
                                       "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = paths;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(stage, true, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "hf");
  const checkpoint::ExportSummary summary = checkpoint::export_hf_safetensors(
      reader, dir / "hf/model.safetensors", checkpoint::ExportDType::kF32);
  // embed_tokens, 9 per layer (2 norms, q, k, v, o, gate, up, down), norm, lm_head
  EXPECT_EQ(summary.tensors, 1 + 2 * 9 + 2);
  const checkpoint::HfWeights exported(dir / "hf");
  ASSERT_NE(exported.find("model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_EQ(exported.find("model.layers.1.self_attn.k_proj.weight")->tensor->shape,
            (std::vector<std::int64_t>{8, 16}));  // 1 key/value head of 8
  EXPECT_EQ(exported.find("model.layers.0.mlp.up_proj.weight")->tensor->shape,
            (std::vector<std::int64_t>{24, 16}));
  ASSERT_TRUE(fs::exists(dir / "hf/config.json"));
  // Without data.tokenizer: no begin- or end-of-text id, rather than LlamaConfig's 1 and 2.
  const std::string config_json = testing::read_text(dir / "hf/config.json");
  EXPECT_NE(config_json.find("\"bos_token_id\": null,"), std::string::npos) << config_json;
  EXPECT_NE(config_json.find("\"eos_token_id\": null,"), std::string::npos) << config_json;

  std::vector<std::string> loading = paths;
  loading.push_back("checkpoint.init_from=" + (dir / "hf").string());
  const Outcome loaded = train(config_for(stage == 0 ? 3 : 0, true, loading));
  EXPECT_EQ(loaded.initial, trained.final) << "stage " << stage;
}

// `checkpoint export` under our own names (its default) loads with init_from as well: the
// fused qkv and fc as they are, every name as in the manifest.
TEST_P(HfLlamaExport, InitFromAnExportUnderOurNamesGivesTheCheckpointsWeightsBitwise) {
  const int stage = GetParam();
  const testing::TempDir dir;
  const std::vector<std::string> paths{"checkpoint.dir=" + (dir / "checkpoints").string(),
                                       "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = paths;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(stage, true, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "ours");
  checkpoint::export_safetensors(reader, dir / "ours/model.safetensors",
                                 checkpoint::ExportDType::kF32);

  std::vector<std::string> loading = paths;
  loading.push_back("checkpoint.init_from=" + (dir / "ours").string());
  const Outcome loaded = train(config_for(stage == 0 ? 3 : 0, true, loading));
  EXPECT_EQ(loaded.initial, trained.final) << "stage " << stage;
}

INSTANTIATE_TEST_SUITE_P(Stages, HfLlamaExport, ::testing::Values(0, 3),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "Stage" + std::to_string(param_info.param);
                         });

// An fp16 export under our own names loads with init_from as each master rounded to
// nearest-even f16 and widened back.
TEST(HfLlamaExport, InitFromAnFp16ExportGivesEachWeightRoundedToF16) {
  const testing::TempDir dir;
  const std::vector<std::string> paths{"checkpoint.dir=" + (dir / "checkpoints").string(),
                                       "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = paths;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(0, true, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "ours");
  checkpoint::export_safetensors(reader, dir / "ours/model.safetensors",
                                 checkpoint::ExportDType::kF16);

  std::vector<std::string> loading = paths;
  loading.push_back("checkpoint.init_from=" + (dir / "ours").string());
  const Outcome loaded = train(config_for(3, true, loading));
  std::vector<float> rounded = trained.final;
  for (float& value : rounded) value = f16_bits_to_f32(f32_to_f16_bits(value));
  EXPECT_EQ(loaded.initial, rounded);
  EXPECT_NE(loaded.initial, trained.final) << "nothing was rounded: not an fp16 export";
}

// With data.tokenizer set, the exported config.json names a Llama 3 tokenizer's
// <|begin_of_text|> and <|end_of_text|>.
TEST(HfLlamaExport, ConfigJsonNamesTheTokenizersBeginAndEndOfText) {
  const testing::TempDir dir;
  testing::write_byte_level_tokenizer(dir / "tokenizer.json",
                                      {{"<|begin_of_text|>", 256}, {"<|end_of_text|>", 257}});
  train(
      config_for(0, true,
                 {"checkpoint.dir=" + (dir / "checkpoints").string(),
                  "run.dir=" + (dir / "run").string(), "checkpoint.every_steps=2",
                  "model.vocab_size=264", "data.tokenizer=" + (dir / "tokenizer.json").string()}));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "hf");
  checkpoint::export_hf_safetensors(reader, dir / "hf/model.safetensors",
                                    checkpoint::ExportDType::kF32);
  const std::string config_json = testing::read_text(dir / "hf/config.json");
  EXPECT_NE(config_json.find("\"bos_token_id\": 256,"), std::string::npos) << config_json;
  EXPECT_NE(config_json.find("\"eos_token_id\": 257,"), std::string::npos) << config_json;
}

TEST(HfLlamaInit, ACopyOfTheTiedHeadIsSkippedOnlyWhenConfigJsonDeclaresTheTie) {
  const testing::TempDir dir;
  testing::TensorMap tensors =
      testing::read_tensors(checkpoint::HfWeights(testing::hf_llama_fixture()), "");
  tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"];
  testing::write_safetensors(dir / "model.safetensors", tensors);
  const Config config = config_for(3, false, {"checkpoint.init_from=" + dir.path().string()});
  for (const std::string& message : refusals(config)) {
    EXPECT_NE(message.find("extra tensor 'lm_head.weight'"), std::string::npos) << message;
  }
  fs::copy_file(testing::hf_llama_fixture() / "config.json", dir / "config.json");
  const Outcome loaded = train(config);
  EXPECT_EQ(loaded.initial,
            testing::expected_from_hf_llama(checkpoint::HfWeights(testing::hf_llama_fixture()),
                                            loaded.parameters, loaded.numel));
}

TEST(HfLlamaInit, AConfigJsonThatDisagreesStopsEveryRankNamingBothKeys) {
  const Config config = config_for(
      3, false,
      {"checkpoint.init_from=" + testing::hf_llama_fixture().string(), "model.rope_theta=500000"});
  for (const std::string& message : refusals(config)) {
    EXPECT_NE(message.find("checkpoint.init_from"), std::string::npos) << message;
    EXPECT_NE(message.find("config.json': rope_theta = 10000, but model.rope_theta = 500000"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace zt
