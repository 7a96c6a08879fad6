// Trains a config on `world_size` ranks (threads over real Gloo on loopback) and returns what
// the equivalence tests compare: rank 0's losses and exported parameters, whether every rank
// exported the same, and each rank's traffic counters, memory and step metrics.
#pragma once

#include <chrono>
#include <utility>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"

namespace zt::testing {

struct TrainingOutcome {
  std::vector<double> losses;
  std::vector<float> parameters;  // rank 0's export
  bool ranks_agree = true;        // every rank exported the same parameters
  std::vector<comm::CommCounters> counters;
  std::vector<MemorySnapshot> memory;
  std::vector<std::vector<engine::StepMetrics>> metrics;  // per rank, per step
};

inline TrainingOutcome train_on_ranks(int world_size, const Config& config) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  std::vector<std::vector<float>> exports(static_cast<std::size_t>(world_size));
  TrainingOutcome outcome;
  outcome.counters.resize(static_cast<std::size_t>(world_size));
  outcome.memory.resize(static_cast<std::size_t>(world_size));
  outcome.metrics.resize(static_cast<std::size_t>(world_size));
  run_ranks(world_size, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, world_size, options);
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    engine::TrainResult result = trainer.run();
    const auto index = static_cast<std::size_t>(rank);
    outcome.metrics[index] = std::move(result.metrics);
    outcome.counters[index] = comm->counters();
    outcome.memory[index] = tracker.snapshot();
    exports[index] = trainer.strategy().full_parameters();
    if (rank == 0) outcome.losses = result.losses;
    comm->barrier()->wait();
  });
  outcome.parameters = exports[0];
  for (const auto& other : exports)
    outcome.ranks_agree = outcome.ranks_agree && other == exports[0];
  return outcome;
}

}  // namespace zt::testing
