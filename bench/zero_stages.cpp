// bench_zero_stages: ZeRO stages 0-3 at world sizes 1, 2 and 4 (ranks as threads over Gloo on
// 127.0.0.1, one communicator per lane), the same GPT and global batch everywhere: rank 0's
// step time, exposed communication, tokens/s, model-state bytes per category against the
// ZeRO paper's formula, and total peak, each compared within this one run.
//
// Exposed communication: the same run again with a communicator that moves zero bytes (every
// op completes at once, no data, no waiting), so the step keeps all its compute and loses
// all its communication; the difference in step time is the communication compute did not
// hide. (Losses of that run are meaningless; only its time is used.)
// Usage: bench_zero_stages [--quick] [--bf16]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/memory_store.h"
#include "core/config/byte_size.h"
#include "core/config/config_loader.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/model_factory.h"
#include "runtime/engine/trainer.h"
#include "sharding/memory_plan.h"

namespace {

// Every collective completes at once and moves nothing: compute without communication.
class ZeroBytesCommunicator final : public zt::comm::Communicator {
 public:
  ZeroBytesCommunicator(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::shared_ptr<zt::comm::Work> all_reduce(zt::Tensor, zt::comm::ReduceOp) override {
    return done();
  }
  std::shared_ptr<zt::comm::Work> reduce_scatter(zt::Tensor, zt::Tensor,
                                                 zt::comm::ReduceOp) override {
    return done();
  }
  std::shared_ptr<zt::comm::Work> all_gather(zt::Tensor, zt::Tensor) override { return done(); }
  std::shared_ptr<zt::comm::Work> all_to_all(zt::Tensor, zt::Tensor) override { return done(); }
  std::shared_ptr<zt::comm::Work> broadcast(zt::Tensor, int) override { return done(); }
  std::shared_ptr<zt::comm::Work> barrier() override { return done(); }
  std::chrono::milliseconds timeout() const override { return std::chrono::minutes(1); }

 protected:
  zt::comm::PeerCounters peer_counters() const override { return {}; }
  std::unique_ptr<zt::comm::Communicator> split_group(const zt::comm::SplitGroup& group) override {
    if (group.rank < 0) return nullptr;
    return std::make_unique<ZeroBytesCommunicator>(group.rank,
                                                   static_cast<int>(group.members.size()));
  }

 private:
  std::shared_ptr<zt::comm::Work> done() {
    auto work = std::make_shared<zt::comm::Work>(next_++, "zero-byte op", timeout());
    work->mark_completed();
    return work;
  }
  const int rank_;
  const int world_size_;
  std::atomic<std::uint64_t> next_{1};
};

struct Row {
  double step_ms = 0;
  double tokens_per_s = 0;
  zt::CategoryBytes peak_bytes{};
  std::int64_t model_state_bytes = 0;
  std::int64_t total_peak_bytes = 0;
};

zt::Config bench_config(int stage, int world_size, bool quick, bool bf16) {
  const int global_batch = 8;
  return zt::parse_config_text(
      "", "bench_zero_stages",
      {"model.type=gpt", quick ? "model.n_layer=2" : "model.n_layer=4", "model.n_head=4",
       quick ? "model.d_model=64" : "model.d_model=256", "model.vocab_size=256", "model.seq_len=64",
       "optimizer.lr=0.001", quick ? "train.steps=3" : "train.steps=8",
       bf16 ? "precision.dtype=bf16" : "precision.dtype=fp32",
       "zero.stage=" + std::to_string(stage), "zero.reduce_bucket_size=1MiB",
       "train.micro_batch_size=" + std::to_string(global_batch / world_size)});
}

Row run(const zt::Config& config, int world_size, bool zero_bytes) {
  // Each rank gets the machine's cores divided among the ranks, as zerotrain launch does.
  zt::nn::cpu::set_blas_threads(std::max(1, 2 / world_size));
  zt::comm::MemoryStore store;
  std::vector<Row> rows(static_cast<std::size_t>(world_size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      zt::MemoryTracker tracker(zt::Device::cpu(rank));
      ZeroBytesCommunicator null_comm(rank, world_size);
      std::optional<zt::comm::OwnedCommLanes> owned;
      if (!zero_bytes) owned.emplace(zt::comm::create_cpu_comm_lanes(store, rank, world_size));
      const zt::comm::CommLanes lanes =
          owned ? owned->lanes() : zt::comm::CommLanes::single(null_comm);
      zt::engine::Trainer trainer(config, lanes, tracker, zt::engine::quiet_trainer_options());
      const auto result = trainer.run();
      Row& row = rows[static_cast<std::size_t>(rank)];
      // The fastest step of 2..n: on a shared machine other processes only ever slow a step
      // down, so the minimum is the figure least disturbed by them.
      std::vector<double> step_ms;
      for (std::size_t i = 1; i < result.metrics.size(); ++i) {
        step_ms.push_back(result.metrics[i].step_ms);
      }
      std::sort(step_ms.begin(), step_ms.end());
      row.step_ms = step_ms.front();
      row.tokens_per_s =
          result.metrics.back().tokens_per_s * result.metrics.back().step_ms / row.step_ms;
      const zt::MemorySnapshot memory = tracker.snapshot();
      row.peak_bytes = memory.peak_bytes;
      for (auto category : {zt::MemoryCategory::kParameters, zt::MemoryCategory::kGradients,
                            zt::MemoryCategory::kOptimizerStates}) {
        row.model_state_bytes += memory.peak_bytes[static_cast<std::size_t>(category)];
      }
      row.total_peak_bytes = memory.total_peak_bytes;
      lanes.control.barrier()->wait();
    });
  }
  for (auto& thread : threads) thread.join();
  return rows[0];
}

std::string kib(std::int64_t bytes) { return std::to_string(bytes / 1024); }

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool bf16 = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--bf16") {
      bf16 = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--bf16]\n", argv[0]);
      return 2;
    }
  }
  const double psi = static_cast<double>(
      zt::engine::make_model(bench_config(0, 1, quick, bf16)).parameter_count());
  std::printf(
      "# GPT %s, Ψ = %.0f, global batch 8 x seq 64, %s AdamW; rank 0's figures; step time =\n"
      "# fastest of steps 2..n; exposed = step time - the same step with zero-byte comm;\n"
      "# params/grads/optim/state in KiB (tracker peaks); formula = the ZeRO paper's bytes\n",
      quick ? "2x64 (quick)" : "4 layers x d 256", psi, bf16 ? "bf16" : "fp32");
  std::printf("%5s %5s %8s %8s %6s %9s %7s %7s %7s %7s %8s %6s %10s %7s\n", "world", "stage",
              "step_ms", "exposed", "exp/st", "tokens/s", "params", "grads", "optim", "state",
              "formula", "st/fml", "peak", "time/s0");
  for (int world : {1, 2, 4}) {
    double stage0_ms = 0;
    for (int stage = 0; stage <= 3; ++stage) {
      const zt::Config config = bench_config(stage, world, quick, bf16);
      const Row row = run(config, world, false);
      const Row compute_only = run(config, world, true);
      if (stage == 0) stage0_ms = row.step_ms;
      // Signed: a negative figure is noise larger than the communication left exposed.
      const double exposed_ms = row.step_ms - compute_only.step_ms;
      const double formula = zt::zero::zero_formula_bytes(
          stage, psi, world, bf16 ? zt::DType::kBF16 : zt::DType::kF32, 2);
      const auto at = [&](zt::MemoryCategory c) {
        return row.peak_bytes[static_cast<std::size_t>(c)];
      };
      std::printf("%5d %5d %8.1f %8.1f %6.2f %9.0f %7s %7s %7s %7s %8s %6.3f %10s %7.2f\n", world,
                  stage, row.step_ms, exposed_ms, exposed_ms / row.step_ms, row.tokens_per_s,
                  kib(at(zt::MemoryCategory::kParameters)).c_str(),
                  kib(at(zt::MemoryCategory::kGradients)).c_str(),
                  kib(at(zt::MemoryCategory::kOptimizerStates)).c_str(),
                  kib(row.model_state_bytes).c_str(),
                  kib(static_cast<std::int64_t>(formula)).c_str(),
                  static_cast<double>(row.model_state_bytes) / formula,
                  zt::format_byte_size(row.total_peak_bytes).c_str(), row.step_ms / stage0_ms);
    }
  }
  return 0;
}
