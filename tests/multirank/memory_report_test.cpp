// memory.json: every rank's per-category bytes (end of step 1, peak, phase of the peak) as
// its tracker measured them, gathered through the store into one file by rank 0; and an
// unwritable run.dir is an error before training.
#include "runtime/engine/memory_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"
#include "support/temp_dir.h"

namespace zt {
namespace {

constexpr int kWorld = 2;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MemoryReport, FileHoldsEveryRanksTrackerFiguresPerCategory) {
  nn::cpu::set_blas_threads(1);
  testing::TempDir dir;
  const Config config = parse_config_text(
      "", "memory_report_test.toml",
      {"model.type=gpt", "model.n_layer=2", "model.n_head=2", "model.d_model=32",
       "model.vocab_size=32", "model.seq_len=8", "train.steps=2", "zero.stage=2",
       "precision.dtype=bf16", "train.micro_batch_size=4", "run.dir=" + dir.path().string()});
  const std::filesystem::path path = dir / "memory.json";
  comm::MemoryStore store;
  std::vector<MemorySnapshot> after_first(kWorld);
  std::vector<MemorySnapshot> end(kWorld);
  std::string summary;
  const std::int64_t parameters = engine::make_model(config).parameter_count();
  testing::run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::OwnedCommLanes lanes = comm::create_cpu_comm_lanes(store, rank, kWorld);
    engine::Trainer trainer(config, lanes.lanes(), tracker, engine::quiet_trainer_options());
    const engine::TrainResult result = trainer.run();
    const auto r = static_cast<std::size_t>(rank);
    after_first[r] = result.memory_after_first_step;
    end[r] = tracker.snapshot();
    const std::string line =
        engine::publish_memory_report(store, {rank, kWorld, &config, parameters}, after_first[r],
                                      end[r], path, std::chrono::seconds(30));
    if (rank == 0) summary = line;
    lanes.lanes().control.barrier()->wait();
  });
  const std::string json = read_file(path);
  EXPECT_NE(json.find("\"format\": \"zerotrain-memory/1\", \"world_size\": 2, \"stage\": 2, "
                      "\"dtype\": \"bf16\", \"parameters\": " +
                      std::to_string(parameters)),
            std::string::npos)
      << json;
  // What ran the attention: here the CPU's kernels (on CUDA: rows, or cudnn with its versions).
  EXPECT_NE(json.find("\"attention\": \"cpu\", \"ranks\": ["), std::string::npos) << json;
  int largest = 0;
  for (int rank = 0; rank < kWorld; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    // Each rank's entry is exactly what its own tracker reported.
    EXPECT_NE(json.find(engine::rank_memory_json(rank, after_first[r], end[r])), std::string::npos)
        << "rank " << rank << " in\n"
        << json;
    const std::string gradients =
        "\"gradients\": {\"after_step_1_bytes\": " +
        std::to_string(
            after_first[r].current_bytes[static_cast<std::size_t>(MemoryCategory::kGradients)]);
    EXPECT_NE(json.find(gradients), std::string::npos) << gradients;
    EXPECT_GT(end[r].peak_bytes[static_cast<std::size_t>(MemoryCategory::kActivations)], 0);
    if (end[r].total_peak_bytes > end[static_cast<std::size_t>(largest)].total_peak_bytes) {
      largest = rank;
    }
  }
  EXPECT_NE(summary.find("on rank " + std::to_string(largest)), std::string::npos) << summary;
  EXPECT_NE(summary.find("activations"), std::string::npos) << summary;
}

TEST(MemoryReport, UnwritableRunDirIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::filesystem::path file = dir / "not_a_directory";
  std::ofstream(file) << "x";
  try {
    engine::check_memory_report_writable(file / "run");
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find((file / "run").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("memory.json"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(engine::check_memory_report_writable(dir / "fresh" / "run"));
  EXPECT_FALSE(std::filesystem::exists(dir / "fresh" / "run" / ".memory.json.probe"));
}

}  // namespace
}  // namespace zt
