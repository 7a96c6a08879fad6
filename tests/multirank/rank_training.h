// Trains a config on `world_size` ranks (threads over real Gloo on loopback) and returns what
// the equivalence tests compare: rank 0's losses and exported parameters, whether every rank
// exported the same, and each rank's traffic counters, memory and step metrics; or, for the
// checkpoint.init_from tests, rank 0's parameters before and after.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "core/config/config.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/checkpoint/checkpoint_format.h"
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

// Builds a Trainer for `config` on each of `world_size` ranks (threads over real Gloo on
// loopback, one BLAS thread each) and calls per_rank(rank, trainer, communicator, tracker),
// which trains; then every rank meets at a barrier. With `ranks_per_node` > 0 the ranks are
// placed on nodes of that many (Topology::blocks), as the launcher places them.
template <typename PerRank>
void run_trainers(int world_size, const Config& config, PerRank&& per_rank,
                  int ranks_per_node = 0) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  run_ranks(world_size, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, world_size, options);
    if (ranks_per_node > 0) {
      comm->place_ranks(comm::Topology::blocks(world_size, ranks_per_node).nodes_by_rank());
    }
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    per_rank(rank, trainer, *comm, tracker);
    comm->barrier()->wait();
  });
}

// The mean of the last `count` losses (all of them when fewer): a run's final loss, as the
// convergence tests compare it.
inline double mean_of_last(const std::vector<double>& losses, std::size_t count) {
  const auto first = losses.end() - static_cast<std::ptrdiff_t>(std::min(count, losses.size()));
  return std::accumulate(first, losses.end(), 0.0) / static_cast<double>(losses.end() - first);
}

inline TrainingOutcome train_on_ranks(int world_size, const Config& config,
                                      int ranks_per_node = 0) {
  std::vector<std::vector<float>> exports(static_cast<std::size_t>(world_size));
  TrainingOutcome outcome;
  outcome.counters.resize(static_cast<std::size_t>(world_size));
  outcome.memory.resize(static_cast<std::size_t>(world_size));
  outcome.metrics.resize(static_cast<std::size_t>(world_size));
  run_trainers(
      world_size, config,
      [&](int rank, engine::Trainer& trainer, comm::Communicator& comm, MemoryTracker& tracker) {
        engine::TrainResult result = trainer.run();
        const auto index = static_cast<std::size_t>(rank);
        outcome.metrics[index] = std::move(result.metrics);
        outcome.counters[index] = comm.counters();
        outcome.memory[index] = tracker.snapshot();
        exports[index] = trainer.strategy().full_parameters();
        if (rank == 0) outcome.losses = result.losses;
      },
      ranks_per_node);
  outcome.parameters = exports[0];
  for (const auto& other : exports)
    outcome.ranks_agree = outcome.ranks_agree && other == exports[0];
  return outcome;
}

// What the checkpoint.init_from tests compare: rank 0's full parameters before the first step
// and after the last, its losses, and the layout's parameter table.
struct InitializedTraining {
  std::vector<float> initial;  // the parameters before the first step
  std::vector<float> final;    // and after the last
  std::vector<double> losses;
  std::vector<checkpoint::ManifestParameter> parameters;
  std::int64_t numel = 0;
};

inline InitializedTraining train_from_initialization(int world_size, const Config& config) {
  InitializedTraining outcome;
  run_trainers(world_size, config,
               [&](int rank, engine::Trainer& trainer, comm::Communicator&, MemoryTracker&) {
                 std::vector<float> initial = trainer.strategy().full_parameters();
                 const engine::TrainResult result = trainer.run();
                 std::vector<float> final = trainer.strategy().full_parameters();
                 if (rank != 0) return;
                 outcome.final = std::move(final);
                 outcome.initial = std::move(initial);
                 outcome.losses = result.losses;
                 outcome.parameters = checkpoint::describe_parameters(trainer.strategy().layout());
                 outcome.numel = trainer.strategy().layout().numel;
               });
  return outcome;
}

}  // namespace zt::testing
