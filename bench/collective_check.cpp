// bench_collective_check: what comm.check_collectives costs (Note [The collective check]).
// ZeRO stage 3 on 2 ranks as threads over Gloo (one communicator per lane, small buckets so a
// step has many ops), with the check off, "step" and "every" in rounds of the same run, the
// order rotating each round: the fastest step of each and the ratios to off. "step" adds one
// exchange of four words per communicator and step; "every" one exchange per op, each waiting for
// the ops before it. Usage: bench_collective_check [--quick]
#include "comm/collective_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/cpuinfo.h"
#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/trainer.h"

namespace {

constexpr int kWorld = 2;

// The fastest step (after the first) of one run with the check in `mode`.
double fastest_step_ms(const zt::Config& config, zt::comm::CollectiveCheckMode mode) {
  zt::nn::cpu::set_blas_threads(1);
  zt::comm::MemoryStore store;
  double fastest = 1e30;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kWorld; ++rank) {
    threads.emplace_back([&, rank] {
      zt::MemoryTracker tracker(zt::Device::cpu(rank));
      auto check = std::make_shared<zt::comm::CollectiveCheck>(mode, &tracker);
      zt::comm::CommOptions options;
      options.collective_check = check;
      zt::comm::OwnedCommLanes lanes =
          zt::comm::create_cpu_comm_lanes(store, rank, kWorld, options);
      zt::engine::TrainerOptions trainer_options = zt::engine::quiet_trainer_options();
      trainer_options.end_of_step = [&check] { check->end_step(); };
      zt::engine::Trainer trainer(config, lanes.lanes(), tracker, trainer_options);
      const zt::engine::TrainResult result = trainer.run();
      if (rank == 0) {
        for (std::size_t i = 1; i < result.metrics.size(); ++i) {
          fastest = std::min(fastest, result.metrics[i].step_ms);
        }
      }
      lanes.lanes().control.barrier()->wait();
    });
  }
  for (std::thread& thread : threads) thread.join();
  return fastest;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  std::printf("bench_collective_check: %s\n", zt::bench::cpuinfo_field("model name").c_str());
  const zt::Config config = zt::parse_config_text(
      "", "bench_collective_check",
      {"model.type=gpt", quick ? "model.n_layer=2" : "model.n_layer=4", "model.n_head=4",
       quick ? "model.d_model=64" : "model.d_model=128", "model.vocab_size=256", "model.seq_len=64",
       "train.micro_batch_size=2", "train.global_batch_size=4",
       quick ? "train.steps=3" : "train.steps=10", "zero.stage=3", "zero.reduce_bucket_size=64KiB",
       "optimizer.lr=0.001"});
  using Mode = zt::comm::CollectiveCheckMode;
  const int rounds = quick ? 1 : 6;
  // The order rotates each round, so no mode always runs right after "every" (whose threads
  // leave the cores warm, or busy, for the next run).
  const Mode modes[3] = {Mode::kOff, Mode::kStep, Mode::kEvery};
  double fastest[3] = {1e30, 1e30, 1e30};
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 3; ++i) {
      const int m = (r + i) % 3;
      fastest[m] = std::min(fastest[m], fastest_step_ms(config, modes[m]));
    }
  }
  const double off_ms = fastest[0];
  const double step_ms = fastest[1];
  const double every_ms = fastest[2];
  std::printf(
      "ZeRO stage 3, %d ranks as threads, GPT %s, 64 KiB buckets, fastest step of %d rounds:\n"
      "  off %.2f ms, step %.2f ms, every %.2f ms\n"
      "  step / off = %.4f (the goal: under 1.02), every / off = %.4f\n",
      kWorld, quick ? "2 x 64" : "4 x 128", rounds, off_ms, step_ms, every_ms, step_ms / off_ms,
      every_ms / off_ms);
  return 0;
}
