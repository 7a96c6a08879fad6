// Listing, committing and pruning checkpoints.
#include "runtime/checkpoint/checkpoint_directory.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_format.h"
#include "runtime/checkpoint/run_id.h"

namespace zt::checkpoint {
namespace {

namespace fs = std::filesystem;

// The step of "step-<digits>" (with `suffix` after the digits), if `name` is one.
std::optional<std::int64_t> step_of(std::string_view name, std::string_view suffix) {
  if (!name.starts_with(kStepPrefix) || !name.ends_with(suffix)) return std::nullopt;
  const std::string_view digits =
      name.substr(kStepPrefix.size(), name.size() - kStepPrefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoll(std::string(digits));
}

void fsync_directory(const fs::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string run_name(const std::string& run_id) {
  return run_id.empty() ? "no run id" : "run id '" + run_id + "'";
}

// A run never replaces another run's checkpoint (Note [Checkpoints belong to a run]).
void refuse_another_runs(const fs::path& checkpoint, std::int64_t step, const std::string& run_id) {
  std::error_code ec;
  if (!fs::exists(checkpoint / kManifestName, ec)) return;  // an unfinished save, no checkpoint
  const std::string owner = owner_run_id(checkpoint);
  if (owner == run_id) return;
  throw Error("cannot save step " + std::to_string(step) + " into checkpoint.dir " +
              data::quoted_path(checkpoint.parent_path()) + ": " + data::quoted_path(checkpoint) +
              " is a checkpoint of another run (" + run_name(owner) + "; this run has " +
              run_name(run_id) +
              ") and a run never replaces another's; give this run a checkpoint.dir of its own "
              "(--set checkpoint.dir=...), or continue that run with checkpoint.resume = \"" +
              checkpoint.string() + "\"");
}

}  // namespace

fs::path checkpoint_directory(const Config& config) {
  return config.checkpoint.dir.empty() ? fs::path(config.run.dir) / "checkpoints"
                                       : fs::path(config.checkpoint.dir);
}

std::optional<std::string> checkpoint_directory_problem(const fs::path& directory) {
  std::error_code ec;
  const fs::file_status status = fs::status(directory, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    return data::quoted_path(directory) + " exists and is not a directory";
  }
  if (!fs::exists(status)) {
    fs::create_directories(directory, ec);
    if (ec) return "cannot create " + data::quoted_path(directory) + ": " + ec.message();
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    return data::quoted_path(directory) + " is not writable: " + std::strerror(errno);
  }
  return std::nullopt;
}

CheckpointListing list_checkpoints(const fs::path& directory) {
  CheckpointListing listing;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return listing;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec)) continue;
    if (step_of(name, kPartialSuffix) || step_of(name, kReplacedSuffix)) {
      listing.partial.push_back(entry.path());
    } else if (const auto step = step_of(name, "")) {
      if (fs::exists(entry.path() / kManifestName, ec)) {
        listing.complete.emplace_back(*step, entry.path());
      } else {
        listing.partial.push_back(entry.path());
      }
    }
  }
  std::sort(listing.complete.begin(), listing.complete.end());
  std::sort(listing.partial.begin(), listing.partial.end());
  return listing;
}

CheckpointListing list_run_checkpoints(const fs::path& directory, const std::string& run_id) {
  CheckpointListing listing = list_checkpoints(directory);
  std::erase_if(listing.complete,
                [&](const auto& entry) { return owner_run_id(entry.second) != run_id; });
  std::erase_if(listing.partial,
                [&](const fs::path& partial) { return owner_run_id(partial) != run_id; });
  return listing;
}

std::vector<std::string> other_runs(const fs::path& directory, const std::string& run_id) {
  std::map<std::string, std::vector<std::int64_t>> steps_by_run;
  for (const auto& [step, path] : list_checkpoints(directory).complete) {
    const std::string owner = owner_run_id(path);
    if (owner != run_id) steps_by_run[owner].push_back(step);
  }
  std::vector<std::string> runs;
  for (const auto& [owner, steps] : steps_by_run) {
    std::string text = run_name(owner) + " (step" + (steps.size() == 1 ? " " : "s ");
    for (std::size_t i = 0; i < steps.size(); ++i) {
      text += (i == 0 ? "" : ", ") + std::to_string(steps[i]);
    }
    runs.push_back(text + ")");
  }
  return runs;
}

std::optional<fs::path> resolve_resume(const Config& config, const std::string& run_id,
                                       bool verbose) {
  const std::string& resume = config.checkpoint.resume;
  if (resume.empty()) return std::nullopt;
  if (resume != "latest") return fs::path(resume);
  const fs::path directory = checkpoint_directory(config);
  const CheckpointListing listing = list_run_checkpoints(directory, run_id);
  if (verbose) {
    // Every unfinished save is passed over, whichever run's.
    for (const fs::path& partial : list_checkpoints(directory).partial) {
      std::fprintf(stderr,
                   "zerotrain: checkpoint.resume = \"latest\": ignoring %s, a save that did not "
                   "finish (no manifest committed)\n",
                   data::quoted_path(partial).c_str());
    }
  }
  if (listing.complete.empty()) {
    if (verbose) {
      std::fprintf(stderr,
                   "zerotrain: checkpoint.resume = \"latest\": no complete checkpoint in %s of "
                   "this run (run id '%s') yet; training starts at step 1\n",
                   data::quoted_path(directory).c_str(), run_id.c_str());
    }
    return std::nullopt;
  }
  return listing.complete.back().second;
}

std::optional<fs::path> latest_checkpoint_of_run_dir(const Config& config) {
  const std::optional<std::string> run_id = read_run_id(config.run.dir);
  if (!run_id) return std::nullopt;
  const CheckpointListing listing = list_run_checkpoints(checkpoint_directory(config), *run_id);
  if (listing.complete.empty()) return std::nullopt;
  return listing.complete.back().second;
}

fs::path prepare_partial(const fs::path& directory, std::int64_t step, const std::string& run_id) {
  refuse_another_runs(directory / step_directory_name(step), step, run_id);
  const fs::path partial = directory / (step_directory_name(step) + std::string(kPartialSuffix));
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) {
    throw IoError("cannot create checkpoint.dir " + data::quoted_path(directory) + ": " +
                  ec.message() + "; set checkpoint.dir to a writable directory");
  }
  fs::remove_all(partial, ec);
  if (ec)
    throw IoError("cannot remove the unfinished save " + data::quoted_path(partial) + ": " +
                  ec.message());
  fs::create_directory(partial, ec);
  if (ec) throw IoError("cannot create " + data::quoted_path(partial) + ": " + ec.message());
  write_run_id(partial, run_id);  // whose unfinished save this is, for pruning
  fsync_directory(directory);
  return partial;
}

fs::path commit_partial(const fs::path& partial, std::int64_t step,
                        const std::string& manifest_text,
                        const std::function<void(std::string_view)>& before_rename) {
  {
    data::AtomicOutputFile manifest(partial / kManifestName, "checkpoint manifest");
    manifest.write(manifest_text.data(), manifest_text.size());
    manifest.commit();
  }
  // The manifest names the run now; the marker of the unfinished save goes.
  std::error_code marker_ec;
  fs::remove(partial / kRunIdFileName, marker_ec);
  if (before_rename) before_rename("save-manifest");
  const fs::path directory = partial.parent_path();
  const fs::path final_path = directory / step_directory_name(step);
  refuse_another_runs(final_path, step, owner_run_id(partial));
  std::error_code ec;
  if (fs::exists(final_path, ec)) {
    // Another save of this step (an earlier attempt that got further): swap the two at once,
    // so a complete step-N exists at every instant, then drop the old one.
    if (::syscall(SYS_renameat2, AT_FDCWD, partial.c_str(), AT_FDCWD, final_path.c_str(),
                  RENAME_EXCHANGE) == 0) {
      fs::remove_all(partial, ec);
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
      // A filesystem without the exchange (NFS, some FUSE): move the old one aside first. A
      // kill in between leaves it as step-N.replaced, which the next save's pruning removes.
      const fs::path aside = directory / (step_directory_name(step) + std::string(kReplacedSuffix));
      fs::remove_all(aside, ec);
      if (::rename(final_path.c_str(), aside.c_str()) != 0 ||
          ::rename(partial.c_str(), final_path.c_str()) != 0) {
        const int error = errno;
        throw IoError("cannot replace " + data::quoted_path(final_path) + " by " +
                      data::quoted_path(partial) + ": " + std::strerror(error));
      }
      fs::remove_all(aside, ec);
    } else {
      const int error = errno;
      throw IoError("cannot replace " + data::quoted_path(final_path) + " by " +
                    data::quoted_path(partial) + ": " + std::strerror(error));
    }
  } else if (::rename(partial.c_str(), final_path.c_str()) != 0) {
    const int error = errno;
    throw IoError("cannot rename " + data::quoted_path(partial) + " to " +
                  data::quoted_path(final_path) + ": " + std::strerror(error));
  }
  fsync_directory(directory);
  return final_path;
}

std::vector<fs::path> prune_checkpoints(const fs::path& directory, std::int64_t keep_last,
                                        const std::string& run_id) {
  const CheckpointListing listing = list_run_checkpoints(directory, run_id);
  std::vector<fs::path> removed = listing.partial;
  if (keep_last > 0 && std::ssize(listing.complete) > keep_last) {
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep_last) < listing.complete.size();
         ++i) {
      removed.push_back(listing.complete[i].second);
    }
  }
  std::error_code ec;
  for (const fs::path& path : removed) fs::remove_all(path, ec);
  if (!removed.empty()) fsync_directory(directory);
  return removed;
}

}  // namespace zt::checkpoint
