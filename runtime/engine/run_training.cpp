// Rank set-up for a training run: store connection, communicator, tracker, BLAS threads.
#include "runtime/engine/run_training.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/byte_size.h"
#include "data/markov_corpus.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/trainer.h"
#include "runtime/launch/rank_env.h"
#include "runtime/launch/rendezvous_store.h"

namespace zt::engine {
namespace {

// The address peers reach this rank's Gloo device at: loopback for a one-node run,
// otherwise this host's name.
std::string gloo_bind_address(const launch::RankEnv& env) {
  if (launch::is_loopback_address(env.master_addr)) return "127.0.0.1";
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "127.0.0.1";
  return host;
}

int blas_threads_for(const Config& config, int local_world_size) {
  if (config.runtime.blas_threads > 0) return static_cast<int>(config.runtime.blas_threads);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, local_world_size));
}

}  // namespace

int run_training(const Config& config) {
  const std::optional<launch::RankEnv> env = launch::read_rank_env();
  const int rank = env ? env->rank : 0;
  const int world_size = env ? env->world_size : 1;
  const auto timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(config.runtime.comm_timeout_s * 1000.0));

  // Several ranks meet on the launcher's store, or on rank 0's when no launcher runs.
  std::unique_ptr<launch::RendezvousStore> rendezvous;
  std::unique_ptr<comm::MemoryStore> local_store;
  if (world_size > 1) {
    rendezvous = std::make_unique<launch::RendezvousStore>(*env, timeout);
  } else {
    local_store = std::make_unique<comm::MemoryStore>();
  }
  comm::Store& store = rendezvous ? rendezvous->store() : *local_store;
  MemoryTracker tracker(Device::cpu(env ? env->local_rank : 0),
                        config.runtime.device_memory_limit_bytes);
  nn::cpu::set_blas_threads(blas_threads_for(config, env ? env->local_world_size : 1));

  comm::CommOptions options;
  options.timeout = timeout;
  options.memory_tracker = &tracker;
  if (env) options.bind_address = gloo_bind_address(*env);
  std::unique_ptr<comm::Communicator> comm =
      comm::create_cpu_communicator(store, rank, world_size, options);

  TrainerOptions trainer_options;
  trainer_options.fault = fault_plan_from_env();
  Trainer trainer(config, *comm, tracker, trainer_options);
  if (rank == 0) {
    std::printf("zerotrain: %s, %lld parameters, %d rank%s, zero.stage %lld, global batch %lld\n",
                trainer.model().name().c_str(),
                static_cast<long long>(trainer.model().parameter_count()), world_size,
                world_size == 1 ? "" : "s", static_cast<long long>(config.zero.stage),
                static_cast<long long>(trainer.batch_sizes().global_batch_size));
    if (!trainer.batch_sizes().inferred.empty()) {
      std::printf("zerotrain: inferred %s\n", trainer.batch_sizes().inferred.c_str());
    }
    if (config.model.type == ModelType::kGpt && config.data.path.empty()) {
      const data::MarkovCorpus corpus(static_cast<std::uint64_t>(config.run.seed),
                                      static_cast<std::int32_t>(config.model.vocab_size),
                                      config.data.synthetic_peakedness);
      std::printf(
          "zerotrain: synthetic Markov corpus: entropy rate %.4f nats/token (the loss "
          "floor; log vocab_size = %.4f)\n",
          corpus.entropy_rate_nats(), std::log(static_cast<double>(config.model.vocab_size)));
    }
    std::fflush(stdout);
  }
  const TrainResult result = trainer.run();
  // Ranks leave together, so no rank tears down its comm while a peer still reads from it.
  comm->barrier()->wait();
  if (rendezvous) rendezvous->finish(timeout);
  if (rank == 0) {
    const MemorySnapshot memory = tracker.snapshot();
    std::printf(
        "zerotrain: done: loss %.4f -> %.4f after %lld steps; peak memory %s (at '%s'); "
        "metrics in %s/metrics.jsonl\n",
        result.losses.front(), result.losses.back(), static_cast<long long>(result.losses.size()),
        format_byte_size(memory.total_peak_bytes).c_str(), memory.total_peak_phase.c_str(),
        config.run.dir.c_str());
  }
  return 0;
}

}  // namespace zt::engine
