// Creating, checking and removing the NVMe optimizer-state file.
#include "offload/nvme_state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace zt::offload {
namespace {

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISBLK(mode)) return "a block device (give a directory on a filesystem there)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a directory";
}

std::string free_space(const std::string& directory) {
  struct statvfs fs {};
  if (statvfs(directory.c_str(), &fs) != 0) return "unknown";
  return std::to_string(static_cast<std::int64_t>(fs.f_bavail) *
                        static_cast<std::int64_t>(fs.f_frsize)) +
         " bytes";
}

}  // namespace

std::optional<std::string> nvme_directory_problem(const std::string& directory) {
  if (directory.empty()) {
    return "offload.optimizer = \"nvme\" needs offload.nvme_path: set it to a directory on a "
           "local NVMe filesystem (ext4, xfs)";
  }
  struct stat st {};
  // stat follows symlinks: a link to a directory is a directory, a link to anything else
  // (or a dangling one) is reported as what it leads to.
  if (stat(directory.c_str(), &st) != 0) {
    const int error = errno;
    return "offload.nvme_path " + quoted(directory) + " cannot be used: " + std::strerror(error) +
           "; create the directory or choose another";
  }
  if (!S_ISDIR(st.st_mode)) {
    return "offload.nvme_path " + quoted(directory) + " is " + file_kind(st.st_mode) +
           ", not a directory; set it to a directory for the optimizer-state files";
  }
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return "offload.nvme_path " + quoted(directory) +
           " is not writable by this user; choose a directory it can create files in";
  }
  return std::nullopt;
}

NvmeStateFile::NvmeStateFile(const std::string& directory, std::int64_t bytes) : bytes_(bytes) {
  if (auto problem = nvme_directory_problem(directory)) throw ConfigError(*problem);
  const std::string stem = directory + (directory.back() == '/' ? "" : "/") + "zerotrain-" +
                           std::to_string(getpid()) + "-";
  // Note [Unique state files]: O_EXCL on a name with this process's id, and the next index
  // when a rank of this process (or an earlier trainer not yet gone) holds one: two runs or
  // two ranks never share a file, and a stale file of a dead process is never reused.
  for (int index = 0; fd_ < 0; ++index) {
    path_ = stem + std::to_string(index) + ".states";
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (fd_ >= 0) break;
    const int error = errno;
    if (error == EEXIST) continue;
    if (error == EINVAL) {
      throw ConfigError(
          "offload.nvme_path " + quoted(directory) +
          " is on a filesystem without direct I/O (open with O_DIRECT: " + std::strerror(error) +
          "); choose a directory on a disk filesystem such as ext4 or xfs");
    }
    throw IoError("offload.nvme_path " + quoted(directory) + ": cannot create " + quoted(path_) +
                  ": " + std::strerror(error));
  }
  // Preallocate, so that a disk too small fails here, before training, not mid-step.
  int error = 0;
  if (bytes > 0 && fallocate(fd_, 0, 0, bytes) != 0) error = errno;
  if (error != 0) {
    const std::string free = free_space(directory);
    close(fd_);
    unlink(path_.c_str());
    fd_ = -1;
    if (error == EOPNOTSUPP) {
      throw ConfigError("offload.nvme_path " + quoted(directory) +
                        " is on a filesystem that cannot preallocate files (fallocate); "
                        "choose a directory on ext4 or xfs");
    }
    throw IoError("offload.nvme_path " + quoted(directory) + ": cannot preallocate " +
                  std::to_string(bytes) + " bytes of optimizer states in " + quoted(path_) + " (" +
                  std::strerror(error) + "; " + free +
                  " free); free space there or choose another directory");
  }
}

NvmeStateFile::~NvmeStateFile() {
  if (fd_ < 0) return;
  close(fd_);
  unlink(path_.c_str());
}

}  // namespace zt::offload
