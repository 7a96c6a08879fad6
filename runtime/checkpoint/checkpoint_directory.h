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
CheckpointListing list_checkpoints(const std::filesystem::path& directory);

// Where checkpoint.resume points: nullopt for "" and for "latest" when checkpoint.dir holds
// no complete checkpoint yet. With `verbose`, says on stderr which interrupted saves
// "latest" passed over, and when it found none.
std::optional<std::filesystem::path> resolve_resume(const Config& config, bool verbose);

// The directory a save of `step` is written into: step-N.tmp, emptied of an earlier
// interrupted save of the same step. Throws IoError naming it.
std::filesystem::path prepare_partial(const std::filesystem::path& directory, std::int64_t step);

// Makes the save in `partial` visible as step-N: writes `manifest_text` as manifest.toml
// (fsynced), calls before_rename("save-manifest"), then renames the directory (exchanging
// it atomically with an existing step-N of the same step, which is then removed) and fsyncs
// checkpoint.dir. Returns the checkpoint's path.
std::filesystem::path commit_partial(const std::filesystem::path& partial, std::int64_t step,
                                     const std::string& manifest_text,
                                     const std::function<void(std::string_view)>& before_rename);

// Removes the complete checkpoints older than the newest `keep_last` (0 keeps all) and any
// other interrupted save; returns what it removed.
std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& directory,
                                                     std::int64_t keep_last);

}  // namespace zt::checkpoint
