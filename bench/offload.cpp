// bench_offload: what optimizer offload (offload.optimizer = "cpu") costs and buys, in one run.
// (1) Step time with offload ÷ without, for the same GPT at zero.stage = 3 on 2 ranks (threads
//     over Gloo on 127.0.0.1), the two runs interleaved round by round, medians compared.
// (2) The largest GPT (n_layer grown at a fixed width) that trains one step under a fixed
//     runtime.device_memory_limit with no offload, optimizer offload, and optimizer +
//     parameter offload.
// Usage: bench_offload [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config_loader.h"
#include "core/error.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "offload/offloaded_optimizer.h"
#include "optim/cpu_adam/cpu_adam.h"
#include "runtime/engine/trainer.h"

namespace {

constexpr int kWorld = 2;

// `offload`: "none", "cpu" (the optimizer) or "cpu+params" (the optimizer and stage 3's
// parameter shard).
zt::Config gpt(std::int64_t n_layer, std::int64_t d_model, const std::string& offload,
               std::int64_t steps, const std::string& limit) {
  const bool params = offload == "cpu+params";
  return zt::parse_config_text(
      "", "bench_offload",
      {"model.type=gpt", "model.n_layer=" + std::to_string(n_layer), "model.n_head=4",
       "model.d_model=" + std::to_string(d_model), "model.vocab_size=64", "model.seq_len=32",
       "train.micro_batch_size=2", "train.steps=" + std::to_string(steps), "zero.stage=3",
       "zero.reduce_bucket_size=1MiB", "offload.optimizer=" + std::string(params ? "cpu" : offload),
       "offload.params=" + std::string(params ? "cpu" : "none"), "offload.cpu_threads=1",
       "runtime.device_memory_limit=" + limit});
}

struct Run {
  std::vector<double> step_ms;  // rank 0's
  bool out_of_memory = false;
  std::int64_t parameters = 0;
};

// Trains `config` on kWorld thread ranks; an out-of-memory error on any rank marks the run.
Run train(const zt::Config& config) {
  zt::comm::MemoryStore store;
  Run run;
  std::mutex mutex;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kWorld; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        zt::MemoryTracker tracker(zt::Device::cpu(rank), config.runtime.device_memory_limit_bytes);
        zt::comm::CommOptions options;
        options.timeout = std::chrono::seconds(30);  // a rank that ran out stops its peer
        auto comm = zt::comm::create_cpu_communicator(store, rank, kWorld, options);
        zt::engine::Trainer trainer(config, *comm, tracker, zt::engine::quiet_trainer_options());
        const zt::engine::TrainResult result = trainer.run();
        comm->barrier()->wait();
        if (rank == 0) {
          std::lock_guard lock(mutex);
          run.parameters = trainer.model().parameter_count();
          for (const auto& metrics : result.metrics) run.step_ms.push_back(metrics.step_ms);
        }
      } catch (const zt::OutOfMemoryError&) {
        std::lock_guard lock(mutex);
        run.out_of_memory = true;
      } catch (const zt::Error&) {
        std::lock_guard lock(mutex);
        run.out_of_memory = true;  // the peer of a rank that ran out: its collective failed
      }
    });
  }
  for (auto& rank : ranks) rank.join();
  return run;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

// The most blocks that train one step under `limit` (doubling, then bisecting).
std::pair<std::int64_t, std::int64_t> largest_fitting(std::int64_t d_model,
                                                      const std::string& offload,
                                                      const std::string& limit) {
  std::int64_t fits = 0;
  std::int64_t parameters = 0;
  std::int64_t fails = 0;
  for (std::int64_t n = 1; n <= 256; n *= 2) {
    const Run run = train(gpt(n, d_model, offload, 1, limit));
    if (run.out_of_memory) {
      fails = n;
      break;
    }
    fits = n;
    parameters = run.parameters;
  }
  while (fails > fits + 1) {
    const std::int64_t mid = (fits + fails) / 2;
    const Run run = train(gpt(mid, d_model, offload, 1, limit));
    if (run.out_of_memory) {
      fails = mid;
    } else {
      fits = mid;
      parameters = run.parameters;
    }
  }
  return {fits, parameters};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string_view(argv[1]) == "--quick";
  zt::nn::cpu::set_blas_threads(1);
  std::printf("bench_offload: %d ranks (threads), zero.stage 3, CPU Adam path %s\n", kWorld,
              std::string(zt::optim::cpu_adam_path_name(zt::optim::best_cpu_adam_path())).c_str());

  // (1) Step time, interleaved rounds.
  const std::int64_t d_model = quick ? 128 : 256;
  const std::int64_t n_layer = quick ? 2 : 8;
  const int rounds = quick ? 2 : 5;
  const std::int64_t steps = quick ? 4 : 8;
  std::vector<double> without;
  std::vector<double> with;
  std::int64_t parameters = 0;
  for (int round = 0; round < rounds; ++round) {
    for (const std::string offload : {"none", "cpu"}) {
      const Run run = train(gpt(n_layer, d_model, offload, steps, "0"));
      parameters = run.parameters;
      // Step 1 builds the pools; the rest is the steady state.
      const double ms = median(std::vector<double>(run.step_ms.begin() + 1, run.step_ms.end()));
      (offload == "none" ? without : with).push_back(ms);
    }
  }
  std::printf(
      "\nstep time, GPT %lld parameters (n_layer %lld, d_model %lld), median of %d rounds\n",
      static_cast<long long>(parameters), static_cast<long long>(n_layer),
      static_cast<long long>(d_model), rounds);
  std::printf("  no offload        %8.2f ms\n", median(without));
  std::printf("  optimizer offload %8.2f ms\n", median(with));
  std::printf("  offload / none    %8.3f\n", median(with) / median(without));

  // (2) The largest model under a fixed device limit.
  const std::string limit = quick ? "16MiB" : "64MiB";
  std::printf("\nlargest GPT (d_model %lld, n_layer grown) training under device_memory_limit %s\n",
              static_cast<long long>(d_model), limit.c_str());
  const auto [none_layers, none_params] = largest_fitting(d_model, "none", limit);
  const auto [cpu_layers, cpu_params] = largest_fitting(d_model, "cpu", limit);
  const auto [both_layers, both_params] = largest_fitting(d_model, "cpu+params", limit);
  std::printf("  no offload          n_layer %3lld  %10lld parameters\n",
              static_cast<long long>(none_layers), static_cast<long long>(none_params));
  std::printf(
      "  optimizer offload   n_layer %3lld  %10lld parameters  (%.2fx)\n",
      static_cast<long long>(cpu_layers), static_cast<long long>(cpu_params),
      none_params > 0 ? static_cast<double>(cpu_params) / static_cast<double>(none_params) : 0.0);
  std::printf(
      "  + parameter offload n_layer %3lld  %10lld parameters  (%.2fx)\n",
      static_cast<long long>(both_layers), static_cast<long long>(both_params),
      none_params > 0 ? static_cast<double>(both_params) / static_cast<double>(none_params) : 0.0);
  return 0;
}
