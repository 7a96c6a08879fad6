// The memory estimator: one rank's bytes per category, the peak and its phase, and the bytes
// it moves per step, for a config at a world size, found by training two steps of the real
// code on a meta device (Note [Meta devices]) with a communicator that plays the rank's part
// of the world. Nothing of the model is allocated, so a 70B-parameter config takes
// milliseconds. Note [Estimating by running] in docs/ARCHITECTURE.md says why.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/memory_tracker.h"
#include "nn/model.h"

namespace zt::estimate {

struct EstimateOptions {
  // The model to estimate (default: the config's built-in model).
  std::function<nn::Model()> make_model;
  // Count Gloo's scratch in the device tracker, as a run of `zerotrain train` does on the
  // CPU (null-tracker communicators of in-process tests leave it out).
  bool count_comm_scratch = true;
  // Record the meta tracker's timeline (for the memory profile's estimate line).
  bool record_timeline = false;
  // Ranks per node, nodes holding consecutive ranks as `zerotrain launch --nproc-per-node`
  // places them (comm::Topology::blocks); 0: every rank on one node. The bytes per step
  // are split by node from it (Note [Counting bytes by node]).
  int ranks_per_node = 0;
};

struct RankEstimate {
  int rank = 0;
  int world_size = 1;
  std::int64_t parameters = 0;           // Ψ
  MemorySnapshot memory;                 // as Trainer::memory_snapshot() at the end of a run
  MemorySnapshot after_first_step;       // memory.json's after_step_1
  std::int64_t comm_bytes_per_step = 0;  // this rank's collectives' payload, one step
  // The same split by where it goes: to ranks of this rank's node, to ranks of others.
  std::int64_t intra_node_bytes_per_step = 0;
  std::int64_t cross_node_bytes_per_step = 0;
  int node_count = 1;  // of the world estimated (EstimateOptions::ranks_per_node)
  std::int64_t offload_bytes_per_step = 0;  // host <-> device copies, one step
  std::vector<MemoryEvent> timeline;        // with record_timeline: initialization and two steps
  std::int64_t micro_batch_size = 0;
  std::int64_t grad_accum_steps = 0;
  // Checkpoints (Note [Checkpoint saving]): this rank's file, the host memory a save holds
  // while the file is written (one copy of the rank's masters and optimizer states), and
  // the host memory a resume reads the rank's part into (DDP: every element).
  std::int64_t checkpoint_file_bytes = 0;
  std::int64_t checkpoint_save_host_bytes = 0;
  std::int64_t checkpoint_load_host_bytes = 0;
  std::int64_t bytes_moved_per_step() const { return comm_bytes_per_step + offload_bytes_per_step; }
};

// Estimates `rank` of `world_size` for `config`. Throws ConfigError for what the run would
// refuse (batch sizes that do not divide, offload settings), naming the key.
RankEstimate estimate_rank(const Config& config, int world_size, int rank,
                           const EstimateOptions& options = {});

}  // namespace zt::estimate
