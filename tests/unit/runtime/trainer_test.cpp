// The single-rank training loop: the loss falls on the synthetic task, metrics are written,
// and settings this version cannot run are refused with the key named.
#include "runtime/engine/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "support/temp_dir.h"

namespace zt::engine {
namespace {

Config tiny_config(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"model.input_dim=16", "model.hidden_dim=32",
                                       "model.num_classes=4", "train.micro_batch_size=32"});
  return parse_config_text("", "test.toml", overrides);
}

struct SingleRank {
  comm::MemoryStore store;
  MemoryTracker tracker{Device::cpu()};
  std::unique_ptr<comm::Communicator> comm = comm::create_cpu_communicator(store, 0, 1);
};

TEST(Trainer, AdamWBringsTheLossDownOnTheSyntheticTask) {
  SingleRank rank;
  Trainer trainer(tiny_config({"train.steps=60", "optimizer.lr=0.01"}), *rank.comm, rank.tracker,
                  quiet_trainer_options());
  const TrainResult result = trainer.run();
  ASSERT_EQ(result.losses.size(), 60u);
  EXPECT_NEAR(result.losses.front(), std::log(4.0), 0.5);  // about chance at the start
  EXPECT_LT(result.losses.back(), 0.5 * result.losses.front())
      << "first " << result.losses.front() << " last " << result.losses.back();
}

TEST(Trainer, SgdWithMomentumBringsTheLossDown) {
  SingleRank rank;
  Trainer trainer(tiny_config({"train.steps=60", "optimizer.type=sgd", "optimizer.lr=0.1"}),
                  *rank.comm, rank.tracker, quiet_trainer_options());
  const TrainResult result = trainer.run();
  EXPECT_LT(result.losses.back(), 0.6 * result.losses.front());
}

TEST(Trainer, GradientAccumulationEqualsTheLargerMicroBatch) {
  SingleRank a;
  SingleRank b;
  Trainer big(tiny_config({"train.steps=5", "train.micro_batch_size=16"}), *a.comm, a.tracker,
              quiet_trainer_options());
  Trainer accumulated(
      tiny_config({"train.steps=5", "train.micro_batch_size=8", "train.grad_accum_steps=2"}),
      *b.comm, b.tracker, quiet_trainer_options());
  const TrainResult r1 = big.run();
  const TrainResult r2 = accumulated.run();
  for (std::size_t i = 0; i < r1.losses.size(); ++i) EXPECT_NEAR(r1.losses[i], r2.losses[i], 1e-5);
  const auto p1 = big.strategy().full_parameters();
  const auto p2 = accumulated.strategy().full_parameters();
  ASSERT_EQ(p1.size(), p2.size());
  for (std::size_t i = 0; i < p1.size(); ++i) ASSERT_NEAR(p1[i], p2[i], 1e-6) << "parameter " << i;
}

TEST(Trainer, WritesMetricsJsonlAndTheEffectiveConfig) {
  const zt::testing::TempDir temp;
  const std::filesystem::path dir = temp / "run";
  SingleRank rank;
  Trainer trainer(tiny_config({"train.steps=3", "run.dir=" + dir.string()}), *rank.comm,
                  rank.tracker, [] {
                    TrainerOptions options = quiet_trainer_options();
                    options.write_run_dir = true;
                    return options;
                  }());
  trainer.run();
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    for (const char* key : {"\"step\": ", "\"loss\": ", "\"lr\": ", "\"grad_norm\": ",
                            "\"samples_per_s\": ", "\"step_ms\": "}) {
      EXPECT_NE(line.find(key), std::string::npos) << key << " missing in " << line;
    }
    EXPECT_NE(line.find("\"step\": " + std::to_string(lines)), std::string::npos) << line;
  }
  EXPECT_EQ(lines, 3);
  const Config reread = load_config_file(dir / "config.toml", {});
  EXPECT_EQ(reread.train.steps, 3);
}

TEST(Trainer, TracksParametersGradientsAndOptimizerStates) {
  SingleRank rank;
  Trainer trainer(tiny_config({"train.steps=1"}), *rank.comm, rank.tracker,
                  quiet_trainer_options());
  trainer.run();
  const std::int64_t padded = trainer.strategy().layout().padded_numel;
  EXPECT_EQ(rank.tracker.current_bytes(MemoryCategory::kParameters), 4 * padded);
  EXPECT_EQ(rank.tracker.current_bytes(MemoryCategory::kGradients), 4 * padded);
  EXPECT_EQ(rank.tracker.current_bytes(MemoryCategory::kOptimizerStates), 2 * 4 * padded);
  EXPECT_EQ(rank.tracker.current_bytes(MemoryCategory::kActivations), 0);
  EXPECT_GT(rank.tracker.peak_bytes(MemoryCategory::kActivations), 0);
}

TEST(Trainer, DeviceMemoryLimitRaisesOutOfMemoryNamingTheCategory) {
  SingleRank tiny;
  MemoryTracker limited(Device::cpu(), 8 * 1024);
  try {
    Trainer trainer(tiny_config({"model.hidden_dim=256"}), *tiny.comm, limited,
                    quiet_trainer_options());
    trainer.run();
    FAIL() << "no out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("parameters"), std::string::npos) << e.what();
  }
}

TEST(Trainer, RefusesWhatThisVersionCannotRunNamingTheKey) {
  SingleRank rank;
  const auto refused = [&](std::vector<std::string> overrides, const std::string& key) {
    try {
      Trainer trainer(tiny_config(std::move(overrides)), *rank.comm, rank.tracker,
                      quiet_trainer_options());
      ADD_FAILURE() << "accepted " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  refused({"runtime.device=cuda"}, "runtime.device");
  refused({"train.global_batch_size=48"}, "train.global_batch_size");
  refused({"data.path=tokens.bin"}, "data.path");
  // Offload: what stage 0 has no shard for, and what is not built yet.
  refused({"offload.optimizer=cpu"}, "zero.stage = 0 has none");
  refused({"offload.optimizer=nvme", "offload.nvme_path=/tmp"}, "zero.stage = 0 has none");
  refused({"zero.stage=1", "offload.optimizer=nvme"}, "needs offload.nvme_path");
  refused({"zero.stage=3", "offload.params=cpu"}, "offload.optimizer = \"cpu\"");
  refused({"zero.stage=2", "offload.optimizer=cpu", "offload.params=cpu"},
          "zero.stage = 3 (now 2)");
  refused({"zero.stage=1", "offload.optimizer=nvme", "offload.nvme_path=/tmp",
           "offload.overlap_step=true"},
          "offload.overlap_step = true delays");
  refused(
      {"zero.stage=3", "offload.optimizer=cpu", "offload.params=cpu", "offload.overlap_step=true"},
      "offload.params = \"none\"");
  refused({"zero.stage=1", "offload.nvme_path=/tmp"}, "offload.nvme_path is set");
}

// A model far past host memory (4 TB of parameters) is refused by the tracker before any
// allocation, with the category and what to try, not a bare std::bad_alloc.
TEST(Trainer, ModelTooBigForHostMemoryIsAClearOutOfMemoryError) {
  SingleRank rank;
  try {
    Trainer trainer(tiny_config({"model.input_dim=1000000", "model.hidden_dim=1000000"}),
                    *rank.comm, rank.tracker, quiet_trainer_options());
    trainer.run();
    FAIL() << "no out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("out of host memory"), std::string::npos) << message;
    EXPECT_NE(message.find("parameters"), std::string::npos) << message;
    EXPECT_NE(message.find("zero.stage = 3"), std::string::npos) << message;
  }
  EXPECT_EQ(rank.tracker.total_current_bytes(), 0);
}

}  // namespace
}  // namespace zt::engine
