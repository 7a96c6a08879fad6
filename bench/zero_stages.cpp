// bench_zero_stages: ZeRO stages 0-3 at world sizes 1, 2 and 4 (ranks as threads over Gloo on
// 127.0.0.1), fp32, the same GPT and global batch everywhere: step time, tokens/s and rank 0's
// memory (model states and total peak), each as a ratio to stage 0 at the same world size,
// measured in this one run. `--quick` runs a tiny version.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/byte_size.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace {

struct Row {
  double step_ms = 0;
  double tokens_per_s = 0;
  std::int64_t model_state_bytes = 0;
  std::int64_t peak_bytes = 0;
};

Row run(int stage, int world_size, bool quick) {
  const int global_batch = 8;
  const zt::Config config = zt::parse_config_text(
      "", "bench_zero_stages",
      {"model.type=gpt", quick ? "model.n_layer=2" : "model.n_layer=4", "model.n_head=4",
       quick ? "model.d_model=64" : "model.d_model=256", "model.vocab_size=256", "model.seq_len=64",
       "optimizer.lr=0.001", quick ? "train.steps=3" : "train.steps=6",
       "zero.stage=" + std::to_string(stage), "zero.reduce_bucket_size=1MiB",
       "train.micro_batch_size=" + std::to_string(global_batch / world_size)});
  // Each rank gets the machine's cores divided among the ranks, as zerotrain launch does.
  zt::nn::cpu::set_blas_threads(std::max(1, 2 / world_size));
  zt::comm::MemoryStore store;
  std::vector<Row> rows(static_cast<std::size_t>(world_size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      zt::MemoryTracker tracker(zt::Device::cpu(rank));
      const auto lanes = zt::comm::create_cpu_comm_lanes(store, rank, world_size);
      zt::engine::Trainer trainer(config, lanes.lanes(), tracker,
                                  zt::engine::quiet_trainer_options());
      const auto result = trainer.run();
      Row& row = rows[static_cast<std::size_t>(rank)];
      for (std::size_t i = 1; i < result.metrics.size(); ++i) {
        row.step_ms += result.metrics[i].step_ms;
        row.tokens_per_s += result.metrics[i].tokens_per_s;
      }
      row.step_ms /= static_cast<double>(result.metrics.size() - 1);
      row.tokens_per_s /= static_cast<double>(result.metrics.size() - 1);
      for (auto category : {zt::MemoryCategory::kParameters, zt::MemoryCategory::kGradients,
                            zt::MemoryCategory::kOptimizerStates}) {
        row.model_state_bytes += tracker.peak_bytes(category);
      }
      row.peak_bytes = tracker.total_peak_bytes();
      lanes.lanes().control.barrier()->wait();
    });
  }
  for (auto& thread : threads) thread.join();
  return rows[0];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  std::printf(
      "# GPT %s, global batch 8 x seq 64, fp32 AdamW; rank 0's figures; step time =\n"
      "# mean over steps 2..n; ratios are to stage 0 at the same world size\n",
      quick ? "2x64 (quick)" : "4 layers x d 256");
  std::printf("%5s %5s %9s %10s %12s %12s %8s %8s %8s\n", "world", "stage", "step_ms", "tokens/s",
              "model_state", "peak_total", "time/s0", "state/s0", "peak/s0");
  for (int world : {1, 2, 4}) {
    Row stage0;
    for (int stage = 0; stage <= 3; ++stage) {
      const Row row = run(stage, world, quick);
      if (stage == 0) stage0 = row;
      std::printf("%5d %5d %9.1f %10.0f %12s %12s %8.2f %8.2f %8.2f\n", world, stage, row.step_ms,
                  row.tokens_per_s, zt::format_byte_size(row.model_state_bytes).c_str(),
                  zt::format_byte_size(row.peak_bytes).c_str(), row.step_ms / stage0.step_ms,
                  static_cast<double>(row.model_state_bytes) /
                      static_cast<double>(stage0.model_state_bytes),
                  static_cast<double>(row.peak_bytes) / static_cast<double>(stage0.peak_bytes));
    }
  }
  return 0;
}
