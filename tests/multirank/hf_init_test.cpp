// checkpoint.init_from on 2 ranks as threads: the tiny Hugging Face GPT-2 fixture fills every
// parameter at every ZeRO stage (stage 3 reading only its shard) and with the optimizer
// offloaded, the first loss is the same at every stage, and a resume takes precedence.
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
#include "runtime/checkpoint/hf_export.h"
#include "runtime/checkpoint/hf_weights.h"
#include "runtime/engine/trainer.h"
#include "support/byte_level_tokenizer.h"
#include "support/hf_gpt2_fixture.h"
#include "support/program_run.h"
#include "support/temp_dir.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int kWorld = 2;

Config config_for(int stage, const std::vector<std::string>& extra) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(overrides.end(),
                   {"train.steps=2", "train.global_batch_size=8", "train.micro_batch_size=4",
                    "zero.stage=" + std::to_string(stage), "model.tie_embeddings=true"});
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  return parse_config_text("", "hf_init_test.toml", overrides);
}

using Outcome = testing::InitializedTraining;

Outcome train(const Config& config) { return testing::train_from_initialization(kWorld, config); }

struct InitCase {
  int stage = 0;
  std::vector<std::string> extra;
};

class HfInit : public ::testing::TestWithParam<InitCase> {};

TEST_P(HfInit, EveryParameterHoldsTheFixturesValuesAndTheFirstLossAgrees) {
  const InitCase setup = GetParam();
  const fs::path fixture = testing::hf_gpt2_fixture("tied");
  std::vector<std::string> extra = setup.extra;
  extra.push_back("checkpoint.init_from=" + fixture.string());
  const Outcome loaded = train(config_for(setup.stage, extra));
  const checkpoint::HfWeights weights(fixture);
  EXPECT_EQ(loaded.initial, testing::expected_from_hf(weights, loaded.parameters, loaded.numel))
      << "stage " << setup.stage;

  // The forward from those weights: the same first loss as stage 0's (fp32 round-off apart),
  // and not the loss of a random start.
  const Outcome reference = train(config_for(0, {"checkpoint.init_from=" + fixture.string()}));
  const Outcome random = train(config_for(setup.stage, setup.extra));
  ASSERT_FALSE(loaded.losses.empty());
  EXPECT_NEAR(loaded.losses[0], reference.losses[0], 1e-5 * std::abs(reference.losses[0]));
  EXPECT_GT(std::abs(loaded.losses[0] - random.losses[0]), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Stages, HfInit,
    ::testing::Values(InitCase{0, {}}, InitCase{1, {}}, InitCase{3, {}},
                      InitCase{3, {"offload.optimizer=cpu", "offload.sub_group_size=1024"}}),
    [](const ::testing::TestParamInfo<InitCase>& param_info) {
      return "Stage" + std::to_string(param_info.param.stage) +
             (param_info.param.extra.empty() ? "" : "Offload");
    });

class HfExport : public ::testing::TestWithParam<int> {};

// A checkpoint exported under Hugging Face names and loaded with init_from gives its weights
// back bit for bit (an untied head, so every GPT-2 name is written and read).
TEST_P(HfExport, InitFromTheExportGivesTheCheckpointsWeightsBitwise) {
  const int stage = GetParam();
  const testing::TempDir dir;
  const std::vector<std::string> untied{"model.tie_embeddings=false",
                                        "checkpoint.dir=" + (dir / "checkpoints").string(),
                                        "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = untied;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(stage, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "hf");
  const checkpoint::ExportSummary summary = checkpoint::export_hf_safetensors(
      reader, dir / "hf/model.safetensors", checkpoint::ExportDType::kF32);
  EXPECT_EQ(summary.tensors, 2 + 2 * 12 + 3);  // wte, wpe, 12 per block, ln_f, lm_head
  // Without data.tokenizer the ids are bytes: no end-of-text id, and none of GPT-2's own.
  const std::string config_json = testing::read_text(dir / "hf/config.json");
  EXPECT_NE(config_json.find("\"bos_token_id\": null,"), std::string::npos) << config_json;
  EXPECT_NE(config_json.find("\"eos_token_id\": null,"), std::string::npos) << config_json;

  std::vector<std::string> loading = untied;
  loading.push_back("checkpoint.init_from=" + (dir / "hf").string());
  const Outcome loaded = train(config_for(stage == 0 ? 3 : 0, loading));
  EXPECT_EQ(loaded.initial, trained.final) << "stage " << stage;
}

// `checkpoint export` under our own names (its default) loads with init_from as well: the
// tied head written once under embedding.wte, every name as in the manifest.
TEST_P(HfExport, InitFromAnExportUnderOurNamesGivesTheCheckpointsWeightsBitwise) {
  const int stage = GetParam();
  const testing::TempDir dir;
  const std::vector<std::string> paths{"checkpoint.dir=" + (dir / "checkpoints").string(),
                                       "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = paths;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(stage, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "ours");
  checkpoint::export_safetensors(reader, dir / "ours/model.safetensors",
                                 checkpoint::ExportDType::kF32);

  std::vector<std::string> loading = paths;
  loading.push_back("checkpoint.init_from=" + (dir / "ours").string());
  const Outcome loaded = train(config_for(stage == 0 ? 3 : 0, loading));
  EXPECT_EQ(loaded.initial, trained.final) << "stage " << stage;
}

INSTANTIATE_TEST_SUITE_P(Stages, HfExport, ::testing::Values(0, 3));

// An fp16 export (under Hugging Face names) loads with init_from as each master rounded to
// nearest-even f16 and widened back: exactly, not merely close.
TEST(HfExport, InitFromAnFp16ExportGivesEachWeightRoundedToF16) {
  const testing::TempDir dir;
  const std::vector<std::string> untied{"model.tie_embeddings=false",
                                        "checkpoint.dir=" + (dir / "checkpoints").string(),
                                        "run.dir=" + (dir / "run").string()};
  std::vector<std::string> saving = untied;
  saving.push_back("checkpoint.every_steps=2");
  const Outcome trained = train(config_for(3, saving));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "hf");
  checkpoint::export_hf_safetensors(reader, dir / "hf/model.safetensors",
                                    checkpoint::ExportDType::kF16);
  EXPECT_EQ(checkpoint::HfWeights(dir / "hf").find("transformer.wte.weight")->tensor->dtype,
            checkpoint::SafetensorsDType::kF16);

  std::vector<std::string> loading = untied;
  loading.push_back("checkpoint.init_from=" + (dir / "hf").string());
  const Outcome loaded = train(config_for(0, loading));
  std::vector<float> rounded = trained.final;
  for (float& value : rounded) value = f16_bits_to_f32(f32_to_f16_bits(value));
  EXPECT_EQ(loaded.initial, rounded);
  EXPECT_NE(loaded.initial, trained.final) << "nothing was rounded: not an fp16 export";
}

// With data.tokenizer set, the exported config.json names its <|endoftext|> as both ids
// (GPT-2 begins and ends text with it), not transformers' GPT-2 default of 50256.
TEST(HfExport, ConfigJsonNamesTheTokenizersEndOfText) {
  const testing::TempDir dir;
  testing::write_byte_level_tokenizer(dir / "tokenizer.json", {{"<|endoftext|>", 256}});
  train(config_for(
      0, {"checkpoint.dir=" + (dir / "checkpoints").string(), "run.dir=" + (dir / "run").string(),
          "checkpoint.every_steps=2", "model.vocab_size=264",
          "data.tokenizer=" + (dir / "tokenizer.json").string()}));
  const checkpoint::CheckpointReader reader(dir / "checkpoints/step-00000002");
  fs::create_directories(dir / "hf");
  checkpoint::export_hf_safetensors(reader, dir / "hf/model.safetensors",
                                    checkpoint::ExportDType::kF32);
  const std::string config_json = testing::read_text(dir / "hf/config.json");
  EXPECT_NE(config_json.find("\"bos_token_id\": 256,"), std::string::npos) << config_json;
  EXPECT_NE(config_json.find("\"eos_token_id\": 256,"), std::string::npos) << config_json;
}

TEST(HfInit, AResumeTakesPrecedence) {
  const testing::TempDir dir;
  const std::string checkpoints = "checkpoint.dir=" + (dir / "checkpoints").string();
  const fs::path fixture = testing::hf_gpt2_fixture("tied");
  const Outcome first = train(config_for(
      3, {checkpoints, "checkpoint.every_steps=1", "checkpoint.init_from=" + fixture.string(),
          "run.dir=" + (dir / "run").string()}));
  // init_from names nothing: were it read, the run would fail.
  const Outcome resumed = train(config_for(
      3, {checkpoints, "checkpoint.resume=" + (dir / "checkpoints/step-00000001").string(),
          "checkpoint.init_from=" + (dir / "missing.safetensors").string(),
          "run.dir=" + (dir / "run").string()}));
  ASSERT_EQ(resumed.losses.size(), 1u);
  ASSERT_EQ(first.losses.size(), 2u);
  EXPECT_EQ(resumed.losses[0], first.losses[1]);
}

TEST(HfInit, AnUnreadableFileIsRefusedOnEveryRankNamingTheKey) {
  const testing::TempDir dir;
  const Config config =
      config_for(3, {"checkpoint.init_from=" + (dir / "missing.safetensors").string()});
  comm::MemoryStore store;
  const std::vector<std::exception_ptr> errors = testing::run_ranks_collect(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    auto comm = comm::create_cpu_communicator(store, rank, kWorld, {});
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
  });
  for (const std::exception_ptr& error : errors) {
    ASSERT_TRUE(error);
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("checkpoint.init_from"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("missing.safetensors"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace zt
