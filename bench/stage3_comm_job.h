// The job bench_flight_recorder and bench_collective_check time: ZeRO stage 3 on 2 ranks as
// threads over Gloo (one communicator per lane), GPT 4 x 128 (2 x 64 with --quick), 64 KiB
// buckets so a step has many ops, 10 steps (3). Each bench sets up what it measures per rank.
#pragma once

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace zt::bench {

inline constexpr int kStage3CommJobWorld = 2;

inline Config stage3_comm_job_config(const std::string& name, bool quick) {
  return parse_config_text("", name,
                           {"model.type=gpt", quick ? "model.n_layer=2" : "model.n_layer=4",
                            "model.n_head=4", quick ? "model.d_model=64" : "model.d_model=128",
                            "model.vocab_size=256", "model.seq_len=64", "train.micro_batch_size=2",
                            "train.global_batch_size=4", quick ? "train.steps=3" : "train.steps=10",
                            "zero.stage=3", "zero.reduce_bucket_size=64KiB", "optimizer.lr=0.001"});
}

// The fastest step after the first (which pays for first-touch allocations).
inline double fastest_step_after_first(const engine::TrainResult& result) {
  double fastest = 1e30;
  for (std::size_t i = 1; i < result.metrics.size(); ++i) {
    fastest = std::min(fastest, result.metrics[i].step_ms);
  }
  return fastest;
}

// Trains `config` on every rank: setup(rank, tracker, comm options, trainer options) before
// the lanes are made, done(rank, result, comm options) after the run; then the ranks meet.
template <typename Setup, typename Done>
void run_stage3_comm_job(const Config& config, Setup&& setup, Done&& done) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kStage3CommJobWorld; ++rank) {
    threads.emplace_back([&, rank] {
      MemoryTracker tracker(Device::cpu(rank));
      comm::CommOptions options;
      engine::TrainerOptions trainer_options = engine::quiet_trainer_options();
      setup(rank, tracker, options, trainer_options);
      comm::OwnedCommLanes lanes =
          comm::create_cpu_comm_lanes(store, rank, kStage3CommJobWorld, options);
      engine::Trainer trainer(config, lanes.lanes(), tracker, trainer_options);
      const engine::TrainResult result = trainer.run();
      done(rank, result, options);
      lanes.lanes().control.barrier()->wait();
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace zt::bench
