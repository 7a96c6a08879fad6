// RunDirectory: a run's claim on its run.dir. One run per directory at a time (a lock held
// for the run's lifetime), and no output of an earlier run replaced unless the config says
// so (run.overwrite).
#pragma once

#include <filesystem>
#include <memory>

#include "core/config/config.h"

namespace zt::engine {

// Note [One run per run.dir]
// Rank 0 alone claims the directory (it alone writes there), so the ranks of one run never
// wait on each other. The claim is flock(2) on run.dir/.lock, taken without waiting and
// released by the kernel when the process ends however it ends, so a crashed run leaves
// no stale lock; the file holds the owner's pid and host for the message a second run
// prints. The file itself stays: removing it would let a third run lock a fresh inode
// while the second still holds the old one.
class RunDirectory {
 public:
  // Creates run.dir, takes its lock and checks that no earlier run's output (metrics.jsonl,
  // config.toml, memory.json, memory.html, memory/, run_id) is there, or run.overwrite is
  // set: then, on a fresh start, removes them all (checkpoints never). A fresh start is any
  // run that loads no checkpoint, checkpoint.resume = "latest" finding none included; a
  // resume continues the outputs instead. Throws Error naming
  // the owner's pid when another run holds the directory, ConfigError naming the file and
  // run.overwrite when an output exists, IoError when the directory cannot be created or an
  // output removed.
  static std::unique_ptr<RunDirectory> claim(const Config& config);
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  ~RunDirectory();  // releases the lock

  // Writes the effective config to config.toml, paths made absolute so the file works as a
  // config from any directory.
  void write_config(const Config& config) const;
  std::filesystem::path metrics_path() const { return dir_ / "metrics.jsonl"; }
  const std::filesystem::path& path() const { return dir_; }

 private:
  RunDirectory(std::filesystem::path dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::filesystem::path dir_;
  int lock_fd_;
};

// The config as config.toml records it: every path-valued key (run.dir, data.path,
// checkpoint.dir, ...) absolute, relative to the current directory.
Config with_absolute_paths(const Config& config);

}  // namespace zt::engine
