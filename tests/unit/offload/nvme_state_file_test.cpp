// The NVMe state file: a unique O_DIRECT file per creation, removed on close; a path that
// cannot hold it (missing, not a directory, a filesystem without direct I/O, too little
// space) is refused at creation with offload.nvme_path and the path in the message.
#include "offload/nvme_state_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "core/error.h"

namespace zt::offload {
namespace {

namespace fs = std::filesystem;

fs::path fresh_directory(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("zt_nvme_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

// The message of the error creating a file of `bytes` in `dir`, or "" when none.
template <typename E>
std::string creation_error(const std::string& dir, std::int64_t bytes) {
  try {
    NvmeStateFile file(dir, bytes);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(NvmeStateFile, EachFileIsNewPreallocatedDirectAndRemovedWhenClosed) {
  const fs::path dir = fresh_directory("unique");
  {
    NvmeStateFile first(dir.string(), 1 << 20);
    NvmeStateFile second(dir.string(), 1 << 20);
    EXPECT_NE(first.path(), second.path());
    EXPECT_EQ(files_in(dir), 2u);
    EXPECT_EQ(fs::file_size(first.path()), 1u << 20) << "preallocated to its full size";
    EXPECT_NE(fcntl(first.fd(), F_GETFL) & O_DIRECT, 0);
    EXPECT_NE(first.path().find("zerotrain-" + std::to_string(getpid())), std::string::npos);
  }
  EXPECT_EQ(files_in(dir), 0u) << "the files are removed when closed";
}

TEST(NvmeStateFile, UnusablePathsAreConfigErrorsNamingTheKeyAndThePath) {
  const fs::path dir = fresh_directory("unusable");
  const fs::path missing = dir / "missing";
  const fs::path regular = dir / "regular";
  const fs::path link = dir / "link_to_regular";
  { std::ofstream(regular.string()) << "x"; }
  fs::create_symlink(regular, link);
  for (const auto& [path, says] : std::array<std::pair<std::string, std::string>, 4>{
           {{missing.string(), "No such file or directory"},
            {regular.string(), "is a regular file, not a directory"},
            {link.string(), "is a regular file, not a directory"},
            {"/dev/null", "is a character device"}}}) {
    const std::string message = creation_error<ConfigError>(path, 4096);
    EXPECT_NE(message.find("offload.nvme_path \"" + path + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(says), std::string::npos) << message;
  }
  EXPECT_NE(creation_error<ConfigError>("", 4096).find("needs offload.nvme_path"),
            std::string::npos);
  if (geteuid() != 0) {
    fs::permissions(dir / ".", fs::perms::owner_read | fs::perms::owner_exec);
    const std::string message = creation_error<ConfigError>(dir.string(), 4096);
    fs::permissions(dir / ".", fs::perms::owner_all);
    EXPECT_NE(message.find("is not writable"), std::string::npos) << message;
  }
}

// Runs `check` (which returns the error message seen, "" for none) in a child process with
// a filesystem of `type` and `options` mounted at a fresh directory of its own mount
// namespace; returns what the check saw, or nullopt when no namespace can be made here
// (not root, or a container that forbids it).
std::optional<std::string> in_private_mount(const std::string& type, const std::string& options,
                                            std::string (*check)(const std::string& dir)) {
  const fs::path dir = fresh_directory("mount_" + type);
  std::array<int, 2> pipe_fds{};
  if (pipe(pipe_fds.data()) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    std::string seen = "\x01no namespace";
    if (unshare(CLONE_NEWNS) == 0 &&
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        mount(type.c_str(), dir.c_str(), type.c_str(), 0, options.c_str()) == 0) {
      seen = check(dir.string());
    }
    const ssize_t written = write(pipe_fds[1], seen.data(), seen.size());
    _exit(written == static_cast<ssize_t>(seen.size()) ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string seen;
  std::array<char, 512> chunk{};
  for (ssize_t n; (n = read(pipe_fds[0], chunk.data(), chunk.size())) > 0;) {
    seen.append(chunk.data(), static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (seen.rfind("\x01", 0) == 0) return std::nullopt;
  return seen;
}

TEST(NvmeStateFile, FilesystemWithoutDirectIoIsAConfigErrorSayingSo) {
  // ramfs has no direct I/O (tmpfs has had it since Linux 6.6).
  const auto seen = in_private_mount(
      "ramfs", "", [](const std::string& dir) { return creation_error<ConfigError>(dir, 4096); });
  if (!seen) GTEST_SKIP() << "cannot mount a ramfs in a private mount namespace here";
  EXPECT_NE(seen->find("offload.nvme_path"), std::string::npos) << *seen;
  EXPECT_NE(seen->find("without direct I/O"), std::string::npos) << *seen;
}

TEST(NvmeStateFile, TooLittleSpaceFailsAtCreationAndLeavesNoFile) {
  // A 64 KiB tmpfs and a 1 MiB file: fallocate says ENOSPC before any training.
  const auto seen = in_private_mount("tmpfs", "size=64k", [](const std::string& dir) {
    std::string message = creation_error<IoError>(dir, 1 << 20);
    if (files_in(dir) != 0) message += " [a file was left behind]";
    return message;
  });
  if (!seen) GTEST_SKIP() << "cannot mount a small tmpfs in a private mount namespace here";
  EXPECT_NE(seen->find("offload.nvme_path"), std::string::npos) << *seen;
  EXPECT_NE(seen->find("No space left on device"), std::string::npos) << *seen;
  EXPECT_NE(seen->find("1048576 bytes"), std::string::npos) << *seen;
  EXPECT_EQ(seen->find("left behind"), std::string::npos) << *seen;
}

}  // namespace
}  // namespace zt::offload
