// Checkpoints end to end on ranks as threads: a run that stops after a checkpoint and resumes
// from it continues bit for bit like the run that never stopped (same world size and stage),
// and within fp32 round-off when it resumes at another world size, stage or offload setting;
// a damaged checkpoint is refused naming the file, and nothing is overwritten.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "key_bias_mask.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/run_id.h"
#include "runtime/engine/trainer.h"
#include "runtime/estimate/memory_estimator.h"
#include "support/temp_dir.h"
#include "tiny_gpt_overrides.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kGlobalBatch = 8;
constexpr int kSteps = 6;
constexpr int kSaveEvery = 3;

struct RunShape {
  int stage = 0;
  int world = 1;
  std::vector<std::string> extra;  // more --set overrides
};

Config config_for(const RunShape& setup, const fs::path& checkpoints, std::int64_t every,
                  const std::string& resume) {
  std::vector<std::string> overrides = testing::tiny_gpt_overrides();
  overrides.insert(
      overrides.end(),
      {"train.steps=" + std::to_string(kSteps),
       "train.global_batch_size=" + std::to_string(kGlobalBatch),
       "train.micro_batch_size=" + std::to_string(kGlobalBatch / (2 * setup.world)),
       "zero.stage=" + std::to_string(setup.stage), "checkpoint.dir=" + checkpoints.string(),
       "checkpoint.every_steps=" + std::to_string(every), "checkpoint.resume=" + resume,
       "run.dir=" + (checkpoints.parent_path() / "run").string()});
  overrides.insert(overrides.end(), setup.extra.begin(), setup.extra.end());
  return parse_config_text("", "checkpoint_test.toml", overrides);
}

struct Outcome {
  std::vector<double> losses;  // of the steps this run made
  std::vector<double> grad_norms;
  std::vector<double> loss_scales;
  std::vector<float> parameters;  // rank 0's export at the end
  std::int64_t first_step = 0;
};

// With `write_run_dir`, rank 0 keeps run.dir (its run_id names the run "latest" continues).
Outcome train(const RunShape& setup, const Config& config,
              std::optional<engine::FaultPlan> fault = std::nullopt, bool write_run_dir = false) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  Outcome outcome;
  testing::run_ranks(setup.world, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, setup.world, options);
    engine::TrainerOptions trainer_options = engine::quiet_trainer_options();
    trainer_options.fault = fault;
    trainer_options.write_run_dir = write_run_dir;
    engine::Trainer trainer(config, *comm, tracker, trainer_options);
    const std::int64_t first = trainer.steps_done() + 1;
    const engine::TrainResult result = trainer.run();
    std::vector<float> parameters = trainer.strategy().full_parameters();
    if (rank == 0) {
      outcome.first_step = first;
      outcome.losses = result.losses;
      for (const auto& m : result.metrics) {
        outcome.grad_norms.push_back(m.grad_norm);
        outcome.loss_scales.push_back(m.loss_scale);
      }
      outcome.parameters = std::move(parameters);
    }
    comm->barrier()->wait();
  });
  return outcome;
}

std::string describe(const RunShape& setup) {
  std::string text =
      "stage " + std::to_string(setup.stage) + " world " + std::to_string(setup.world);
  for (const std::string& e : setup.extra) text += " " + e;
  return text;
}

void PrintTo(const RunShape& shape, std::ostream* os) { *os << describe(shape); }

// Bitwise: the same floats, NaN included (a skipped fp16 step has a NaN grad norm).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

fs::path step_dir(const fs::path& checkpoints, std::int64_t step) {
  return checkpoints / checkpoint::step_directory_name(step);
}

class BitwiseResume : public ::testing::TestWithParam<RunShape> {};

TEST_P(BitwiseResume, ContinuesExactlyLikeTheRunThatNeverStopped) {
  const RunShape setup = GetParam();
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const Outcome unsaved = train(setup, config_for(setup, dir / "unused", 0, ""));
  const Outcome saved = train(setup, config_for(setup, checkpoints, kSaveEvery, ""));
  ASSERT_TRUE(fs::exists(step_dir(checkpoints, 3) / "manifest.toml")) << describe(setup);
  ASSERT_TRUE(fs::exists(step_dir(checkpoints, 6) / "manifest.toml")) << describe(setup);
  // Saving changes nothing about training (with offload.overlap_step too: the update in
  // flight lands for the copy, its parameters still go out when the next step sends them).
  ASSERT_EQ(saved.losses.size(), static_cast<std::size_t>(kSteps));
  for (std::size_t i = 0; i < saved.losses.size(); ++i) {
    EXPECT_TRUE(same_bits(saved.losses[i], unsaved.losses[i])) << describe(setup) << " step " << i;
  }
  EXPECT_EQ(saved.parameters, unsaved.parameters) << describe(setup);

  // The resumed run saves too: its step 6 replaces the first run's (an atomic exchange of the
  // two directories) and, trained alike, holds the same bytes.
  const auto file_bytes = [&](int rank) {
    std::ifstream in(step_dir(checkpoints, 6) / checkpoint::rank_file_name(rank, setup.world),
                     std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  std::vector<std::string> first_step6;
  for (int r = 0; r < setup.world; ++r) first_step6.push_back(file_bytes(r));
  const Outcome resumed =
      train(setup, config_for(setup, checkpoints, kSaveEvery, step_dir(checkpoints, 3).string()));
  EXPECT_EQ(resumed.first_step, 4);
  for (int r = 0; r < setup.world; ++r) {
    EXPECT_TRUE(file_bytes(r) == first_step6[static_cast<std::size_t>(r)])
        << describe(setup) << ": rank " << r << "'s step-6 file differs after the resumed run";
  }
  EXPECT_FALSE(fs::exists(checkpoints / "step-00000006.tmp"));
  ASSERT_EQ(resumed.losses.size(), static_cast<std::size_t>(kSteps - 3)) << describe(setup);
  for (std::size_t i = 0; i < resumed.losses.size(); ++i) {
    EXPECT_TRUE(same_bits(resumed.losses[i], saved.losses[3 + i]))
        << describe(setup) << ", step " << 4 + i << ": " << resumed.losses[i] << " vs "
        << saved.losses[3 + i];
    EXPECT_TRUE(same_bits(resumed.grad_norms[i], saved.grad_norms[3 + i]))
        << describe(setup) << ", step " << 4 + i;
    EXPECT_TRUE(same_bits(resumed.loss_scales[i], saved.loss_scales[3 + i]))
        << describe(setup) << ", step " << 4 + i;
  }
  EXPECT_EQ(resumed.parameters, saved.parameters) << describe(setup);
}

INSTANTIATE_TEST_SUITE_P(
    Checkpoints, BitwiseResume,
    ::testing::Values(
        RunShape{0, 1, {}}, RunShape{1, 1, {}}, RunShape{2, 1, {}}, RunShape{3, 1, {}},
        RunShape{0, 2, {}}, RunShape{1, 2, {}}, RunShape{2, 2, {}}, RunShape{3, 2, {}},
        RunShape{2, 2, {"precision.dtype=bf16"}},
        RunShape{3, 2, {"precision.dtype=bf16", "optimizer.type=sgd", "optimizer.momentum=0.9"}},
        RunShape{2, 2, {"offload.optimizer=cpu"}},
        RunShape{3, 2, {"offload.optimizer=cpu", "offload.params=cpu", "precision.dtype=bf16"}},
        RunShape{1, 2, {"offload.optimizer=cpu", "offload.overlap_step=true"}},
        RunShape{
            3, 2, {"offload.optimizer=cpu", "offload.overlap_step=true", "precision.dtype=bf16"}},
        // Dropout's masks are drawn from the step, not from state a checkpoint would keep.
        RunShape{3, 2, {"model.dropout=0.1"}},
        RunShape{0, 1, {"model.dropout=0.1", "activation_checkpointing.enabled=true"}},
        // The Llama family (no wpe, grouped-query attention, SwiGLU), untied and tied.
        RunShape{0, 2, {"model.type=llama", "model.n_kv_head=1", "model.ffn_dim=24"}},
        RunShape{3,
                 2,
                 {"model.type=llama", "model.n_kv_head=1", "model.ffn_dim=24",
                  "model.tie_embeddings=true", "precision.dtype=bf16"}},
        RunShape{3,
                 2,
                 {"model.type=llama", "model.n_kv_head=1", "model.ffn_dim=24",
                  "offload.optimizer=cpu", "offload.params=cpu"}},
        // hpZ's secondary shard is no state: the resumed run's first forward rebuilds it.
        RunShape{3, 4, {"zero.hpz_partition_size=2", "precision.dtype=bf16"}}));

TEST(BitwiseResume, Fp16ResumesWithTheLossScalerMidBackoff) {
  // Rank 1's step-2 gradients overflow: the scale backs off at step 2, grows again after two
  // clean steps (4) and the save at step 3 falls between, with one clean step counted.
  const RunShape setup{2,
                       2,
                       {"precision.dtype=fp16", "precision.initial_loss_scale=1024",
                        "precision.loss_scale_growth_interval=2"}};
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  engine::FaultPlan overflow;  // rank 1's step-2 gradients become infinite
  overflow.rank = 1;
  overflow.step = 2;
  overflow.overflow = true;
  const Outcome saved = train(setup, config_for(setup, checkpoints, kSaveEvery, ""), overflow);
  ASSERT_EQ(saved.loss_scales.size(), static_cast<std::size_t>(kSteps));
  EXPECT_EQ(saved.loss_scales[1], 1024.0);  // step 2 ran at 1024 and overflowed
  EXPECT_EQ(saved.loss_scales[2], 512.0);   // backed off
  EXPECT_EQ(saved.loss_scales[4], 1024.0);  // grown after steps 3 and 4
  EXPECT_TRUE(std::isnan(saved.grad_norms[1]));
  const Outcome resumed =
      train(setup, config_for(setup, checkpoints, 0, step_dir(checkpoints, 3).string()));
  ASSERT_EQ(resumed.losses.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(same_bits(resumed.losses[i], saved.losses[3 + i])) << "step " << 4 + i;
    EXPECT_EQ(resumed.loss_scales[i], saved.loss_scales[3 + i]) << "step " << 4 + i;
  }
  EXPECT_EQ(resumed.parameters, saved.parameters);
}

TEST(BitwiseResume, NvmeStatesAreSavedAndLoadedAndMeetHostStates) {
  const fs::path nvme =
      fs::path(::testing::TempDir()) / ("zt_checkpoint_nvme_" + std::to_string(::getpid()));
  fs::remove_all(nvme);
  fs::create_directories(nvme);
  // Several sub-groups per shard, so the states travel to and from the file in pieces.
  const RunShape on_nvme{2,
                         2,
                         {"offload.optimizer=nvme", "offload.nvme_path=" + nvme.string(),
                          "offload.sub_group_size=1024"}};
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const Outcome saved = train(on_nvme, config_for(on_nvme, checkpoints, kSaveEvery, ""));
  const Outcome resumed =
      train(on_nvme, config_for(on_nvme, checkpoints, 0, step_dir(checkpoints, 3).string()));
  // The NVMe path updates bitwise like host states, so a host-offload resume is exact too.
  const RunShape on_host{2, 2, {"offload.optimizer=cpu"}};
  const Outcome on_host_resumed =
      train(on_host, config_for(on_host, checkpoints, 0, step_dir(checkpoints, 3).string()));
  fs::remove_all(nvme);
  ASSERT_EQ(resumed.losses.size(), 3u);
  ASSERT_EQ(on_host_resumed.losses.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(same_bits(resumed.losses[i], saved.losses[3 + i])) << "step " << 4 + i;
    EXPECT_TRUE(same_bits(on_host_resumed.losses[i], saved.losses[3 + i])) << "step " << 4 + i;
  }
  EXPECT_EQ(resumed.parameters, saved.parameters);
  EXPECT_EQ(on_host_resumed.parameters, saved.parameters);
}

struct Reshard {
  RunShape from;
  RunShape to;
};

class ReshardingResume : public ::testing::TestWithParam<Reshard> {};

TEST_P(ReshardingResume, ContinuesWithTheSameLossesWithinRoundOff) {
  const auto [from, to] = GetParam();
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const Outcome saved = train(from, config_for(from, checkpoints, kSaveEvery, ""));
  const Outcome resumed =
      train(to, config_for(to, checkpoints, 0, step_dir(checkpoints, 3).string()));
  const std::string what = describe(from) + " -> " + describe(to);
  ASSERT_EQ(resumed.losses.size(), 3u) << what;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(resumed.losses[i], saved.losses[3 + i], 1e-5 * std::fabs(saved.losses[3 + i]))
        << what << ", step " << 4 + i;
  }
  ASSERT_EQ(resumed.parameters.size(), saved.parameters.size());
  // AdamW moves the key bias by its round-off (Note [Adam and the key bias] in
  // zero_equivalence_test.cpp): up to lr per step after the resume, not within 1e-5.
  const Config config = config_for(to, checkpoints, 0, "");
  const bool adam = config.optimizer.type != OptimizerType::kSgd;
  const std::vector<bool> key_bias = testing::key_bias_mask(config);
  const auto key_bias_bound = static_cast<float>(config.optimizer.lr * (kSteps - kSaveEvery));
  float worst = 0;
  for (std::size_t i = 0; i < saved.parameters.size(); ++i) {
    const float difference = std::fabs(resumed.parameters[i] - saved.parameters[i]);
    if (adam && key_bias[i]) {
      EXPECT_LE(difference, key_bias_bound) << what << ": key bias element " << i;
      continue;
    }
    worst = std::max(worst, difference);
  }
  EXPECT_LE(worst, 1e-5f) << what;
}

// SGD with momentum: its one state travels with the masters, and (linear in the gradient)
// it pins every parameter to round-off; AdamW's two states are checked by the bitwise cases
// and by the last two here.
const std::vector<std::string> kSgd{"optimizer.type=sgd", "optimizer.momentum=0.9"};
const std::vector<std::string> kSgdOverlap{"optimizer.type=sgd", "optimizer.momentum=0.9",
                                           "offload.optimizer=cpu", "offload.overlap_step=true"};
const std::vector<std::string> kSgdHybrid{"optimizer.type=sgd", "optimizer.momentum=0.9",
                                          "zero.shard_group_size=2"};
const std::vector<std::string> kAdamHybrid{"zero.shard_group_size=2"};
const std::vector<std::string> kSgdHpz{"optimizer.type=sgd", "optimizer.momentum=0.9",
                                       "zero.hpz_partition_size=2"};
const std::vector<std::string> kSgdOffload{"optimizer.type=sgd", "optimizer.momentum=0.9",
                                           "offload.optimizer=cpu"};

INSTANTIATE_TEST_SUITE_P(
    Checkpoints, ReshardingResume,
    ::testing::Values(Reshard{RunShape{1, 2, kSgd}, RunShape{1, 4, kSgd}},
                      Reshard{RunShape{3, 4, kSgd}, RunShape{3, 2, kSgd}},
                      Reshard{RunShape{1, 2, kSgd}, RunShape{3, 2, kSgd}},
                      Reshard{RunShape{0, 2, kSgd}, RunShape{2, 4, kSgd}},
                      Reshard{RunShape{2, 2, kSgdOffload}, RunShape{2, 2, kSgd}},
                      Reshard{RunShape{3, 2, kSgd}, RunShape{3, 1, kSgdOffload}},
                      Reshard{RunShape{2, 4, {}}, RunShape{0, 1, {}}},
                      // overlap_step's saved parameters in use reshard like the masters.
                      Reshard{RunShape{2, 2, kSgdOverlap}, RunShape{2, 4, kSgdOverlap}},
                      // Hybrid sharding saves one group's shards, which read like a world of
                      // the group's size: into a flat world, another group size, and back.
                      Reshard{RunShape{2, 4, kSgdHybrid}, RunShape{2, 2, kSgd}},
                      Reshard{RunShape{3, 4, kSgdHybrid}, RunShape{3, 4, kSgd}},
                      Reshard{RunShape{1, 4, kSgd}, RunShape{3, 4, kSgdHybrid}},
                      Reshard{RunShape{2, 4, kAdamHybrid}, RunShape{1, 1, {}}},
                      // hpZ saves the primary shards only: into a flat world, and back.
                      Reshard{RunShape{3, 4, kSgdHpz}, RunShape{3, 2, kSgd}},
                      Reshard{RunShape{3, 2, kSgd}, RunShape{3, 4, kSgdHpz}}));

// Hybrid sharding writes a checkpoint once: the first group's 2 ranks write a file each, as a
// world of 2 would, and the manifest names that world; the other group's ranks write nothing.
TEST(HybridShardingCheckpoint, OneGroupWritesTheStatesOnce) {
  const RunShape setup{2, 4, kAdamHybrid};
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  train(setup, config_for(setup, checkpoints, kSaveEvery, ""));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(step_dir(checkpoints, 3))) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"manifest.toml", checkpoint::rank_file_name(0, 2),
                                             checkpoint::rank_file_name(1, 2)}));
  std::ifstream manifest(step_dir(checkpoints, 3) / "manifest.toml");
  const std::string text{std::istreambuf_iterator<char>(manifest),
                         std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("world_size = 2"), std::string::npos) << text;
}

// ---- Refusals: a damaged or foreign checkpoint is named, and nothing is overwritten.

class DamagedCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    train(setup_, config_for(setup_, checkpoints_, kSaveEvery, ""), std::nullopt, true);
    shard_ = step_dir(checkpoints_, 3) / checkpoint::rank_file_name(1, 2);
    ASSERT_TRUE(fs::exists(shard_));
  }
  // The error loading step 3 at world 2 gives (empty when it loads).
  std::string load_error(const RunShape& setup) {
    try {
      train(setup, config_for(setup, checkpoints_, 0, step_dir(checkpoints_, 3).string()));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  std::vector<char> bytes_of(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  const RunShape setup_{1, 2, {}};
  const testing::TempDir dir_;
  const fs::path checkpoints_ = dir_ / "checkpoints";
  fs::path shard_;
};

TEST_F(DamagedCheckpoint, ACorruptShardIsNamed) {
  std::vector<char> bytes = bytes_of(shard_);
  bytes[bytes.size() - 5] ^= 0x10;  // one bit of the last optimizer state
  std::ofstream(shard_, std::ios::binary | std::ios::trunc).write(bytes.data(), std::ssize(bytes));
  const std::string error = load_error(setup_);
  EXPECT_NE(error.find(shard_.string() + "' is corrupt"), std::string::npos) << error;
  EXPECT_EQ(bytes_of(shard_), bytes) << "the damaged file was rewritten";
}

TEST_F(DamagedCheckpoint, ATruncatedShardIsNamed) {
  fs::resize_file(shard_, fs::file_size(shard_) - 100);
  const std::string error = load_error(setup_);
  EXPECT_NE(error.find(shard_.string()), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST_F(DamagedCheckpoint, AMissingShardIsNamed) {
  fs::remove(shard_);
  const std::string error = load_error(setup_);
  EXPECT_NE(error.find(shard_.string()), std::string::npos) << error;
  EXPECT_NE(error.find("incomplete"), std::string::npos) << error;
}

TEST_F(DamagedCheckpoint, AnotherModelIsRefusedNamingTheParameter) {
  RunShape wider = setup_;
  wider.extra.push_back("model.d_model=32");
  const std::string error = load_error(wider);
  EXPECT_NE(error.find("saved from another model"), std::string::npos) << error;
  EXPECT_NE(error.find("embedding.wte"), std::string::npos) << error;
  EXPECT_NE(error.find((step_dir(checkpoints_, 3)).string()), std::string::npos) << error;
}

TEST_F(DamagedCheckpoint, AnotherOptimizerOrGlobalBatchIsRefusedNamingTheKey) {
  RunShape sgd = setup_;
  sgd.extra = {"optimizer.type=sgd", "optimizer.momentum=0.9"};
  EXPECT_NE(load_error(sgd).find("optimizer.type"), std::string::npos);
  RunShape bigger = setup_;
  bigger.extra = {"train.global_batch_size=16"};
  EXPECT_NE(load_error(bigger).find("train.global_batch_size"), std::string::npos);
}

TEST_F(DamagedCheckpoint, LatestPassesOverAnInterruptedSave) {
  // A save of step 9 that never committed, and a step directory without its manifest.
  fs::create_directories(checkpoints_ / "step-00000009.tmp");
  fs::copy(step_dir(checkpoints_, 6), checkpoints_ / "step-00000008", fs::copy_options::recursive);
  fs::remove(checkpoints_ / "step-00000008" / "manifest.toml");
  RunShape longer = setup_;
  longer.extra.push_back("train.steps=7");
  ::testing::internal::CaptureStderr();
  const Outcome resumed =
      train(longer, config_for(longer, checkpoints_, 0, "latest"), std::nullopt, true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(resumed.first_step, 7) << err;
  EXPECT_NE(err.find("ignoring '" + (checkpoints_ / "step-00000009.tmp").string()),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("ignoring '" + (checkpoints_ / "step-00000008").string()), std::string::npos)
      << err;
  EXPECT_NE(err.find("resumed from '" + step_dir(checkpoints_, 6).string()), std::string::npos)
      << err;
}

TEST(CheckpointSaving, AnUnusableDirectoryStopsTheRunBeforeTheFirstStep) {
  const testing::TempDir dir;
  const fs::path file = dir / "not-a-directory";
  std::ofstream(file) << "x";
  const RunShape setup{1, 1, {}};
  try {
    train(setup, config_for(setup, file, 2, ""));
    FAIL() << "trained with checkpoint.dir a regular file";
  } catch (const std::exception& e) {  // run_ranks' summary of the rank's ConfigError
    const std::string message = e.what();
    EXPECT_NE(message.find("--set checkpoint.dir=" + file.string() + ": checkpoint.dir '" +
                           file.string() + "' exists and is not a directory"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(std::ifstream(file).get(), 'x') << "the file was touched";
}

TEST(CheckpointSaving, LatestWithNothingSavedYetStartsFresh) {
  const testing::TempDir dir;
  const RunShape setup{0, 1, {}};
  ::testing::internal::CaptureStderr();
  const Outcome fresh = train(setup, config_for(setup, dir / "none-yet", 3, "latest"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(fresh.first_step, 1);
  EXPECT_NE(err.find("no complete checkpoint in"), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(dir / "none-yet" / "step-00000006" / "manifest.toml"));
}

// A resumed run's memory profile covers its own first memory_profile_steps steps.
TEST(CheckpointSaving, AResumedRunProfilesItsOwnFirstSteps) {
  const testing::TempDir dir;
  const RunShape setup{1, 1, {}};
  train(setup, config_for(setup, dir / "checkpoints", kSaveEvery, ""));
  Config config =
      config_for(setup, dir / "checkpoints", 0, step_dir(dir / "checkpoints", 3).string());
  config.runtime.memory_profile = true;
  config.runtime.memory_profile_steps = 2;
  comm::MemoryStore store;
  auto comm = comm::create_cpu_communicator(store, 0, 1, {});
  MemoryTracker tracker(Device::cpu());
  engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
  trainer.run();
  std::int64_t last_step = 0;
  bool saw_step_4 = false;
  for (const MemoryEvent& event : tracker.timeline()) {
    last_step = std::max(last_step, event.step);
    saw_step_4 = saw_step_4 || event.step == 4;
  }
  EXPECT_TRUE(saw_step_4);
  EXPECT_EQ(last_step, 5) << "the profile should stop after steps 4 and 5";
}

TEST(CheckpointSaving, KeepLastRemovesTheOldestAndEveryFileIsWhereTheManifestSays) {
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  RunShape setup{3, 2, {"checkpoint.keep_last=2"}};
  train(setup, config_for(setup, checkpoints, 1, ""));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"step-00000005", "step-00000006"}));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(step_dir(checkpoints, 6))) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"manifest.toml", "rank-00000-of-00002.zts",
                                             "rank-00001-of-00002.zts"}));
  // The estimator knows each rank's file and the host memory a save holds, before any run.
  const Config config = config_for(setup, checkpoints, 1, "");
  for (int rank = 0; rank < 2; ++rank) {
    const estimate::RankEstimate estimated = estimate::estimate_rank(config, 2, rank);
    const auto real = static_cast<std::int64_t>(
        fs::file_size(step_dir(checkpoints, 6) / checkpoint::rank_file_name(rank, 2)));
    EXPECT_EQ(estimated.checkpoint_file_bytes, real) << "rank " << rank;
    EXPECT_GT(estimated.checkpoint_save_host_bytes, real * 9 / 10) << "rank " << rank;
    EXPECT_LE(estimated.checkpoint_save_host_bytes, real) << "rank " << rank;
  }
}

// ---- Checkpoints belong to a run: "latest" and keep_last see only the run's own, and no run
// replaces or removes another's.

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string manifest_id(const fs::path& checkpoint) {
  return checkpoint::manifest_run_id(read_text(checkpoint / "manifest.toml"));
}

TEST(CheckpointRuns, ASecondRunIntoTheSameDirectoryLeavesTheFirstRunsCheckpoints) {
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const RunShape first{1, 2, {"checkpoint.keep_last=1", "train.steps=4"}};
  train(first, config_for(first, checkpoints, 2, ""), std::nullopt, true);
  const std::string first_id = manifest_id(step_dir(checkpoints, 4));
  ASSERT_EQ(first_id.size(), 12u);
  const std::string first_step4 = read_text(step_dir(checkpoints, 4) / "manifest.toml");

  // Another seed and run.dir, saving at step 3 only: nothing of the first run is pruned.
  const RunShape second{1, 2, {"checkpoint.keep_last=1", "train.steps=3", "run.seed=2"}};
  Config config = config_for(second, checkpoints, 3, "");
  config.run.dir = (dir / "second").string();
  ::testing::internal::CaptureStderr();
  train(second, config, std::nullopt, true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(read_text(step_dir(checkpoints, 4) / "manifest.toml"), first_step4);
  const std::string second_id = manifest_id(step_dir(checkpoints, 3));
  EXPECT_NE(second_id, first_id);
  EXPECT_EQ(checkpoint::read_run_id(dir / "second"), second_id);
  EXPECT_EQ(err.find("holds checkpoints of another run"),
            err.rfind("holds checkpoints of another run"))
      << "warned more than once: " << err;
  EXPECT_NE(err.find("'" + checkpoints.string() + "' holds checkpoints of another run: run id '" +
                     first_id + "' (step 4)"),
            std::string::npos)
      << err;

  // A third run reaching step 4 stops rather than replace the first run's step 4.
  const RunShape third{1, 2, {"checkpoint.keep_last=1", "train.steps=4", "run.seed=3"}};
  config = config_for(third, checkpoints, 4, "");
  config.run.dir = (dir / "third").string();
  try {
    train(third, config, std::nullopt, true);
    FAIL() << "replaced another run's checkpoint";
  } catch (const std::exception& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("into checkpoint.dir '" + checkpoints.string() + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("run id '" + first_id + "'"), std::string::npos) << message;
    const std::string third_id = *checkpoint::read_run_id(dir / "third");
    EXPECT_NE(message.find("this run has run id '" + third_id + "'"), std::string::npos) << message;
  }
  EXPECT_EQ(read_text(step_dir(checkpoints, 4) / "manifest.toml"), first_step4);
  EXPECT_TRUE(fs::exists(step_dir(checkpoints, 3) / "manifest.toml"));
}

TEST(CheckpointRuns, LatestNeverContinuesAnotherRun) {
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const RunShape setup{1, 1, {}};
  train(setup, config_for(setup, checkpoints, kSaveEvery, ""), std::nullopt, true);
  const std::string first_id = manifest_id(step_dir(checkpoints, 6));

  // Another run.dir: its "latest" finds no checkpoint of its own, and starts at step 1.
  const RunShape longer{1, 1, {"train.steps=7", "run.seed=2"}};
  Config other = config_for(longer, checkpoints, 0, "latest");
  other.run.dir = (dir / "other").string();
  ::testing::internal::CaptureStderr();
  const Outcome fresh = train(longer, other, std::nullopt, true);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(fresh.first_step, 1) << err;
  EXPECT_NE(err.find("run id '" + first_id + "' (steps 3, 6)"), std::string::npos) << err;

  // The first run's own run.dir continues it.
  const Outcome resumed =
      train(longer, config_for(longer, checkpoints, 0, "latest"), std::nullopt, true);
  EXPECT_EQ(resumed.first_step, 7);
}

TEST(CheckpointRuns, AResumeByPathAdoptsTheRunIdAndLatestAndKeepLastSeeIt) {
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const RunShape setup{1, 2, {}};
  train(setup, config_for(setup, checkpoints, kSaveEvery, ""));  // keeps no run.dir
  const std::string id = manifest_id(step_dir(checkpoints, 3));

  // Another world size by path, into a run.dir of its own: the same run goes on.
  const RunShape resharded{1, 1, {}};
  train(resharded, config_for(resharded, checkpoints, 0, step_dir(checkpoints, 3).string()),
        std::nullopt, true);
  EXPECT_EQ(checkpoint::read_run_id(dir / "run"), id);

  // "latest" finds step 6 of that run; keep_last = 1 removes its steps 3 and 6.
  const RunShape longer{1, 1, {"train.steps=7", "checkpoint.keep_last=1"}};
  const Outcome resumed =
      train(longer, config_for(longer, checkpoints, 1, "latest"), std::nullopt, true);
  EXPECT_EQ(resumed.first_step, 7);
  EXPECT_FALSE(fs::exists(step_dir(checkpoints, 3)));
  EXPECT_FALSE(fs::exists(step_dir(checkpoints, 6)));
  EXPECT_EQ(manifest_id(step_dir(checkpoints, 7)), id);
}

TEST(CheckpointRuns, AManifestWithoutARunIdLoadsOnlyByPath) {
  const testing::TempDir dir;
  const fs::path checkpoints = dir / "checkpoints";
  const RunShape setup{1, 1, {}};
  train(setup, config_for(setup, checkpoints, kSaveEvery, ""), std::nullopt, true);
  // Step 6 as a version before run ids wrote it.
  const fs::path manifest = step_dir(checkpoints, 6) / "manifest.toml";
  std::istringstream lines(read_text(manifest));
  std::string without_id;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("run_id")) without_id += line + "\n";
  }
  std::ofstream(manifest, std::ios::trunc) << without_id;
  ASSERT_EQ(manifest_id(step_dir(checkpoints, 6)), "");

  const RunShape longer{1, 1, {"train.steps=7"}};
  const Outcome latest =
      train(longer, config_for(longer, checkpoints, 0, "latest"), std::nullopt, true);
  EXPECT_EQ(latest.first_step, 4) << "\"latest\" took the checkpoint without a run id";
  const Outcome by_path =
      train(longer, config_for(longer, checkpoints, 0, step_dir(checkpoints, 6).string()));
  EXPECT_EQ(by_path.first_step, 7);
}

}  // namespace
}  // namespace zt
