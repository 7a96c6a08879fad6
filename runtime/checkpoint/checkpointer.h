// Checkpointer: a rank's side of saving and resuming (Note [Checkpoint saving] and
// Note [Checkpoint state] in docs/ARCHITECTURE.md). The trainer calls after_step() after
// every optimizer step and finish() at the end; load() once, before the first step.
//
// A save after step N: rank 0 empties step-N.tmp; every rank copies its state shard to host
// memory (the only time training waits) and a ShardWriter writes it while training goes on.
// At each later step the ranks agree (one small all-reduce) whether every write is done;
// then rank 0 writes the manifest and renames step-N.tmp to step-N: the checkpoint exists
// from that rename on, and a kill at any earlier moment leaves only a .tmp that loading
// passes over. One save is in flight at a time (a due save first waits for the last).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/config/config.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/shard_writer.h"
#include "sharding/zero_strategy.h"

namespace zt::checkpoint {

struct CheckpointerHooks {
  // Collective: the element-wise maximum of every rank's two values (the trainer's control
  // lane); the ranks' agreement on whether a write is done or failed.
  std::function<std::array<float, 2>(std::array<float, 2>)> agree_max;
  // Fault injection at a save phase (the trainer's ZEROTRAIN_FAULT), with the saved step.
  std::function<void(std::int64_t step, std::string_view phase)> at_phase;
};

class Checkpointer {
 public:
  // `optimizer_states`: fp32 states the optimizer keeps per parameter. `run_dir`: run.dir when
  // this run keeps one (its run_id file names the run a resume = "latest" continues), else
  // empty. `weights_only`: load() is for measuring the weights (zerotrain eval), not for
  // training on, so a checkpoint of another global batch loads too (its data position is
  // not used).
  Checkpointer(const Config& config, zero::ZeroStrategy& strategy, int optimizer_states, int rank,
               int world_size, CheckpointerHooks hooks, std::filesystem::path run_dir,
               bool weights_only = false);
  ~Checkpointer();

  // checkpoint.resume: loads the checkpoint it names into the strategy (resharding to this
  // world size and stage) and returns the trainer's state; nullopt when training starts
  // fresh. Collective. Throws Error naming the file or key when the checkpoint does not fit.
  std::optional<TrainerState> load();
  // After each optimizer step, with the state the trainer would resume from.
  void after_step(const TrainerState& state);
  // Waits for the save in flight and commits it (collective).
  void finish();
  // Saves the state after `state.step` now and commits it before returning (collective):
  // a caller's own save point (before a planned stop, on a preemption notice).
  void save_now(const TrainerState& state);
  // Where checkpoints go.
  const std::filesystem::path& directory() const { return directory_; }
  // This run's id (Note [Checkpoints belong to a run]), the same on every rank; "" until
  // load() or the first save decides it. Rank 0's caller keeps it in run.dir/run_id.
  const std::string& run_id() const { return run_id_; }

 private:
  // Collective: rank 0 decides the run id (adopted from the checkpoint resumed from, read
  // from run.dir/run_id for "latest", else new) and every rank receives it.
  void decide_run_id();
  void start_save(const TrainerState& state);
  // Collective: agrees whether every rank's write is done; with `wait`, waits for it first.
  // Commits when done.
  void settle_save(bool wait);
  void commit();
  Manifest manifest_for(const TrainerState& state) const;
  void check_fits(const Manifest& manifest, const std::filesystem::path& path) const;

  const Config& config_;
  zero::ZeroStrategy& strategy_;
  const std::size_t state_count_;  // optimizer states per parameter
  const int rank_;
  const int world_size_;
  const bool weights_only_;  // load(): any global batch
  CheckpointerHooks hooks_;
  std::filesystem::path directory_;
  std::filesystem::path run_dir_;
  std::string run_id_;
  ShardWriter writer_;
  struct Pending {
    TrainerState state;
    std::filesystem::path partial;
    std::chrono::steady_clock::time_point started;
    double staging_seconds = 0;
    bool collected = false;    // the write has finished and been waited for
    std::exception_ptr error;  // why it failed
  };
  std::optional<Pending> pending_;
};

}  // namespace zt::checkpoint
