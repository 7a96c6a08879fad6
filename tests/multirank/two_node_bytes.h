// What every rank sent while training a config on two nodes of 2 ranks (ranks as threads over
// real Gloo, placed with Topology::blocks): the run's totals and the median step's split by
// node, which the estimator's per-step figures are compared with.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store/memory_store.h"
#include "comm/topology.h"
#include "nn/kernels/cpu/gemm_cpu.h"
#include "rank_threads.h"
#include "runtime/engine/trainer.h"

namespace zt::testing {

struct RunBytes {
  // Every byte the rank's communicator sent, once the run is over (its last prefetch
  // included): the same total however the ops overlapped the steps.
  std::uint64_t all_gather = 0;
  std::uint64_t intra_node = 0;
  std::uint64_t cross_node = 0;
  // The median step's, from the metrics (a step's figure also holds a prefetch for the next
  // step when that completes before the step is measured; most steps hold one exactly).
  std::int64_t median_step_intra_node = 0;
  std::int64_t median_step_cross_node = 0;
};

inline std::int64_t median_of(std::vector<std::int64_t> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Each rank's bytes, training `config` at world 4 on nodes {0, 1} and {2, 3}.
inline std::vector<RunBytes> run_on_two_nodes(const Config& config) {
  constexpr int kWorld = 4;
  nn::cpu::set_blas_threads(1);
  comm::MemoryStore store;
  const comm::Topology topology = comm::Topology::blocks(kWorld, 2);
  std::vector<RunBytes> bytes(kWorld);
  run_ranks(kWorld, [&](int rank) {
    MemoryTracker tracker(Device::cpu(rank));
    comm::CommOptions options;
    options.timeout = std::chrono::seconds(60);
    auto comm = comm::create_cpu_communicator(store, rank, kWorld, options);
    comm->place_ranks(topology.nodes_by_rank());
    std::vector<std::int64_t> intra, cross;
    engine::Trainer trainer(config, *comm, tracker, engine::quiet_trainer_options());
    for (const engine::StepMetrics& m : trainer.run().metrics) {
      intra.push_back(static_cast<std::int64_t>(m.intra_node_bytes));
      cross.push_back(static_cast<std::int64_t>(m.cross_node_bytes));
    }
    // The communicator is one ordered queue: the barrier completes after the prefetch the
    // last update started.
    comm->barrier()->wait();
    RunBytes& mine = bytes[static_cast<std::size_t>(rank)];
    const comm::CommCounters counters = trainer.strategy().comm_counters();  // splits too
    mine.all_gather = counters.bytes(comm::CollectiveKind::kAllGather);
    mine.cross_node = counters.total_cross_node_bytes();
    mine.intra_node = counters.total_intra_node_bytes();
    mine.median_step_intra_node = median_of(intra);
    mine.median_step_cross_node = median_of(cross);
  });
  return bytes;
}

}  // namespace zt::testing
