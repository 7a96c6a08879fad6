// Rank set-up for a training run: store connection, communicator, tracker, BLAS threads.
#include "runtime/engine/run_training.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <new>
#include <thread>

#include "comm/comm_lanes.h"
#include "comm/local_address.h"
#include "comm/store/memory_store.h"
#include "core/config/byte_size.h"
#include "core/device/device_context.h"
#include "data/markov_corpus.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "runtime/engine/device_selection.h"
#include "runtime/engine/fault_injection.h"
#include "runtime/engine/memory_report.h"
#include "runtime/engine/run_directory.h"
#include "runtime/engine/trainer.h"
#include "runtime/launch/rank_env.h"
#include "runtime/launch/rendezvous_store.h"

namespace zt::engine {
namespace {

// The address peers reach this rank's Gloo device at: the one this machine talks to the
// store's host from (on the network all nodes share; loopback for a one-machine run).
std::string gloo_bind_address(const launch::RankEnv& env) {
  return comm::local_address_toward(env.master_addr);
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
  if (rank == 0) check_memory_report_writable(config.run.dir);

  // Before any connection, so a second run into a run.dir in use stops at once.
  std::unique_ptr<RunDirectory> run_directory;
  if (rank == 0) run_directory = RunDirectory::claim(config);

  // Several ranks meet on the launcher's store, or on rank 0's when no launcher runs.
  std::unique_ptr<launch::RendezvousStore> rendezvous;
  std::unique_ptr<comm::MemoryStore> local_store;
  if (world_size > 1) {
    rendezvous = std::make_unique<launch::RendezvousStore>(*env, timeout);
  } else {
    local_store = std::make_unique<comm::MemoryStore>();
  }
  comm::Store& store = rendezvous ? rendezvous->store() : *local_store;
  const CommBackendKind backend = resolved_comm_backend(config);
  const std::unique_ptr<DeviceContext> device = make_device_context(
      rank_device(config, env ? env->local_rank : 0), config.runtime.device_memory_limit_bytes);
  MemoryTracker& tracker = device->tracker();
  nn::cpu::set_blas_threads(blas_threads_for(config, env ? env->local_world_size : 1));

  comm::CommOptions options;
  options.timeout = timeout;
  options.device = device.get();
  options.backend =
      backend == CommBackendKind::kNccl ? comm::CommBackend::kNccl : comm::CommBackend::kGloo;
  // Gloo's scratch buffers are host memory: counted in the rank's tracker on the CPU only.
  if (device->device().kind == DeviceKind::kCpu) options.memory_tracker = &tracker;
  if (env) options.bind_address = gloo_bind_address(*env);
  // One communicator per lane, so the loss reduction never waits behind bulk traffic.
  const comm::OwnedCommLanes lanes = comm::create_comm_lanes(store, rank, world_size, options);
  comm::Communicator* comm = &lanes.lanes().control;

  TrainerOptions trainer_options;
  trainer_options.fault = fault_plan_from_env();
  trainer_options.run_directory = run_directory.get();
  // A std::bad_alloc from memory outside the tracker gets the tracker's explanation.
  const auto explained = [&tracker](auto&& step) {
    try {
      return step();
    } catch (const std::bad_alloc&) {
      throw tracker.untracked_allocation_failed();
    }
  };
  const std::unique_ptr<Trainer> trainer_owner = explained(
      [&] { return std::make_unique<Trainer>(config, lanes.lanes(), *device, trainer_options); });
  Trainer& trainer = *trainer_owner;
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
  const TrainResult result = explained([&] { return trainer.run(); });
  const std::string memory_summary = publish_memory_report(
      store,
      {rank, world_size, &config, trainer.model().parameter_count(), device->device().to_string()},
      result.memory_after_first_step, tracker.snapshot(),
      std::filesystem::path(config.run.dir) / "memory.json", timeout);
  // Ranks leave together, so no rank tears down its comm while a peer still reads from it.
  comm->barrier()->wait();
  if (rendezvous) rendezvous->finish(timeout);
  if (rank == 0) {
    std::printf(
        "zerotrain: done: loss %.4f -> %.4f after %lld steps; peak memory %s; metrics in "
        "%s/metrics.jsonl, memory in %s/memory.json\n",
        result.losses.front(), result.losses.back(), static_cast<long long>(result.losses.size()),
        memory_summary.c_str(), config.run.dir.c_str(), config.run.dir.c_str());
  }
  return 0;
}

}  // namespace zt::engine
