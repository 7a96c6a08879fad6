// Trains a config on `world_size` ranks (threads over real Gloo on loopback) and returns what
// the checkpoint.init_from tests compare: rank 0's full parameters before the first step and
// after the last, its losses, and the layout's parameter table.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "core/config/config.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/engine/trainer.h"

namespace zt::testing {

struct InitializedTraining {
  std::vector<float> initial;  // the parameters before the first step
  std::vector<float> final;    // and after the last
  std::vector<double> losses;
  std::vector<checkpoint::ManifestParameter> parameters;
  std::int64_t numel = 0;
};

inline InitializedTraining train_from_initialization(int world_size, const Config& config) {
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  InitializedTraining outcome;
  run_ranks(world_size, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, world_size, options);
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    std::vector<float> initial = trainer.strategy().full_parameters();
    const engine::TrainResult result = trainer.run();
    std::vector<float> final = trainer.strategy().full_parameters();
    if (rank == 0) {
      outcome.final = std::move(final);
      outcome.initial = std::move(initial);
      outcome.losses = result.losses;
      outcome.parameters = checkpoint::describe_parameters(trainer.strategy().layout());
      outcome.numel = trainer.strategy().layout().numel;
    }
    comm->barrier()->wait();
  });
  return outcome;
}

}  // namespace zt::testing
