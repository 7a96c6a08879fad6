// checkpoint.dir: which checkpoints are complete, which saves were interrupted, where a
// save goes while it is written and how it becomes visible (Note [Checkpoint saving]).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"

namespace zt::checkpoint {

// checkpoint.dir, or <run.dir>/checkpoints when it is empty.
std::filesystem::path checkpoint_directory(const Config& config);

// Why checkpoints cannot be saved into `directory` (it is not a directory, cannot be
// created, or is not writable), or nullopt; creates it when missing. Checked before
// training starts, so a run does not find out at its first save.
std::optional<std::string> checkpoint_directory_problem(const std::filesystem::path& directory);

struct CheckpointListing {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> complete;  // by step
  std::vector<std::filesystem::path> partial;  // step-N.tmp, or step-N without a manifest
};
// Every checkpoint in `directory`, of whichever run.
CheckpointListing list_checkpoints(const std::filesystem::path& directory);
// Only run `run_id`'s (Note [Checkpoints belong to a run]): its complete checkpoints and its
// unfinished saves.
CheckpointListing list_run_checkpoints(const std::filesystem::path& directory,
                                       const std::string& run_id);
// The other runs' complete checkpoints: "run 'a1b2c3d4e5f6' (steps 2, 4)", one per run, with
// those of no run id (written before run ids) as "no run id"; empty when there are none.
std::vector<std::string> other_runs(const std::filesystem::path& directory,
                                    const std::string& run_id);

// Where checkpoint.resume points: nullopt for "" and for "latest" when checkpoint.dir holds
// no complete checkpoint of run `run_id` yet. With `verbose`, says on stderr which
// interrupted saves "latest" passed over, and when it found none.
std::optional<std::filesystem::path> resolve_resume(const Config& config, const std::string& run_id,
                                                    bool verbose);

// The checkpoint checkpoint.resume = "latest" loads, as rank 0 sees it before any rank
// starts: the newest complete checkpoint in checkpoint.dir of the run run.dir/run_id names;
// nullopt when run.dir names no run or that run has none yet (the run then starts at step 1,
// a fresh start). Throws Error naming run.dir/run_id when it holds something else.
std::optional<std::filesystem::path> latest_checkpoint_of_run_dir(const Config& config);

// The directory run `run_id`'s save of `step` is written into: step-N.tmp, emptied of an
// earlier interrupted save of the same step and marked with the run id. Throws Error when
// step-N is another run's checkpoint, IoError naming the directory it cannot prepare.
std::filesystem::path prepare_partial(const std::filesystem::path& directory, std::int64_t step,
                                      const std::string& run_id);

// Makes the save in `partial` visible as step-N: writes `manifest_text` as manifest.toml
// (fsynced), calls before_rename("save-manifest"), then renames the directory (exchanging
// it atomically with an existing step-N of the same run, which is then removed) and fsyncs
// checkpoint.dir. Throws Error, replacing nothing, when step-N is another run's checkpoint.
// Returns the checkpoint's path.
std::filesystem::path commit_partial(const std::filesystem::path& partial, std::int64_t step,
                                     const std::string& manifest_text,
                                     const std::function<void(std::string_view)>& before_rename);

// Removes run `run_id`'s complete checkpoints older than its newest `keep_last` (0 keeps
// all) and its interrupted saves; returns what it removed. Other runs' are never touched.
std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& directory,
                                                     std::int64_t keep_last,
                                                     const std::string& run_id);

}  // namespace zt::checkpoint
