// NvmeStateFile: the file under offload.nvme_path that holds one rank's optimizer states,
// opened for direct I/O under a name no other run or rank uses, preallocated to its full
// size so a full disk stops the run at start, and removed when the file is closed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zt::offload {

// What is wrong with `directory` as offload.nvme_path (missing, not a directory, not
// writable), or nothing when a state file can be created there. Checks only what a stat
// and access() can tell; direct I/O and space are checked when the file is created.
std::optional<std::string> nvme_directory_problem(const std::string& directory);

class NvmeStateFile {
 public:
  // Creates `directory`/zerotrain-<pid>-<k>.states (the first k whose name is free; O_EXCL)
  // with O_DIRECT and preallocates `bytes`. Throws ConfigError naming offload.nvme_path for
  // a directory that cannot be used or a filesystem without direct I/O, IoError for too
  // little space.
  NvmeStateFile(const std::string& directory, std::int64_t bytes);
  NvmeStateFile(const NvmeStateFile&) = delete;
  NvmeStateFile& operator=(const NvmeStateFile&) = delete;
  ~NvmeStateFile();  // closes and removes the file

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t bytes_ = 0;
};

}  // namespace zt::offload
