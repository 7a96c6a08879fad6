// Regular-file inputs and atomically replaced outputs (Note [Replacing an output]).
#include "data/safe_file.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.h"

namespace zt::data {
namespace {

namespace fs = std::filesystem;

std::string reason(int error) { return std::generic_category().message(error); }

// What a non-regular file is, in the words of `ls -l` and `stat`.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

FileIdentity identity_of(const struct stat& st) { return {st.st_dev, st.st_ino}; }

void close_quietly(int fd) noexcept {
  if (fd >= 0) ::close(fd);
}

// The directory a file lives in, for fsync after a rename ("." for a bare name).
fs::path directory_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// A temp name beside `path` no other writer uses: pid plus a per-process counter, created
// with O_EXCL so a leftover never gets reused.
fs::path temp_name(const fs::path& path, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  fs::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
          std::to_string(attempt);
  return temp;
}

[[noreturn]] void refuse_existing(const fs::path& path, const char* what) {
  throw IoError(std::string("refusing to write ") + what + " " + quoted_path(path) +
                ": it already exists, and is left as it is; pass --overwrite to replace it, or "
                "choose another output path");
}

}  // namespace

std::string quoted_path(const fs::path& path) { return "'" + path.string() + "'"; }

InputFile InputFile::open(const fs::path& path, const char* what, const char* missing_hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    throw IoError(std::string("cannot read ") + what + " " + quoted_path(path) + ": " +
                  reason(error) +
                  (error == ENOENT ? std::string("; ") + missing_hint : std::string()));
  }
  if (!S_ISREG(st.st_mode)) {
    throw IoError(std::string("cannot read ") + what + " " + quoted_path(path) + ": it is " +
                  kind_of(st.st_mode) + "; pass a regular file");
  }
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, open must not hang;
  // the fstat below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    throw IoError(std::string("cannot read ") + what + " " + quoted_path(path) + ": " +
                  reason(error));
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close_quietly(fd);
    throw IoError(std::string("cannot read ") + what + " " + quoted_path(path) +
                  ": it changed into something other than a regular file while being opened");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return InputFile(path, fd, identity_of(st), static_cast<std::uint64_t>(st.st_size));
}

InputFile::InputFile(InputFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      identity_(other.identity_),
      size_bytes_(other.size_bytes_) {}

InputFile::~InputFile() { close_quietly(fd_); }

std::size_t InputFile::read_some(void* buffer, std::size_t capacity) {
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, capacity);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    const int error = errno;
    throw IoError("cannot read " + quoted_path(path_) + ": " + reason(error));
  }
}

void InputFile::read_at(std::uint64_t offset, void* buffer, std::size_t bytes) const {
  auto* out = static_cast<char*>(buffer);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, out, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      throw IoError("cannot read " + quoted_path(path_) + ": " + reason(error));
    }
    if (got == 0) {
      throw IoError("cannot read " + quoted_path(path_) + ": it ends at byte " +
                    std::to_string(offset) + ", before the " + std::to_string(bytes) +
                    " bytes expected there (truncated?)");
    }
    out += got;
    offset += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
}

void check_replaceable_output(const fs::path& path, const char* what,
                              std::optional<FileIdentity> input, ExistingOutput existing) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT) return;  // created fresh
    throw IoError(std::string("cannot write ") + what + " " + quoted_path(path) + ": " +
                  reason(error));
  }
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    throw IoError(std::string("refusing to write ") + what + " " + quoted_path(path) +
                  ": it is a symbolic link" + (ec ? "" : " to " + quoted_path(target)) +
                  "; zerotrain does not replace links, pass the target path itself or remove "
                  "the link");
  }
  if (!S_ISREG(st.st_mode)) {
    throw IoError(std::string("refusing to write ") + what + " " + quoted_path(path) + ": it is " +
                  kind_of(st.st_mode) +
                  ", and only a regular file is ever replaced; choose "
                  "another output path");
  }
  if (input && identity_of(st) == *input) {
    throw IoError(std::string("refusing to write ") + what + " " + quoted_path(path) +
                  ": it is the input file itself, which writing would destroy; choose "
                  "another output path");
  }
  if (existing == ExistingOutput::kRefuse) refuse_existing(path, what);
}

void check_output_outside(const fs::path& path, const char* what, const fs::path& directory,
                          const char* directory_what) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(directory), ec);
  if (ec) return;  // a directory that cannot be resolved is not read either
  std::vector<fs::path> targets{fs::weakly_canonical(fs::absolute(path), ec)};
  if (fs::is_symlink(path, ec)) {
    const fs::path link = fs::read_symlink(path, ec);
    if (!ec) {
      const fs::path parent = fs::absolute(path).parent_path();
      targets.push_back(fs::weakly_canonical(link.is_absolute() ? link : parent / link, ec));
    }
  }
  for (const fs::path& target : targets) {
    const fs::path relative = target.lexically_relative(root);
    if (target.empty() || relative.empty() || *relative.begin() == "..") continue;
    throw IoError(std::string("refusing to write ") + what + " " + quoted_path(path) +
                  (target == fs::absolute(path)
                       ? std::string()
                       : " (which resolves to " + quoted_path(target) + ")") +
                  ": it lies inside the " + directory_what + " " + quoted_path(directory) +
                  " it reads, which writing there would change; choose an output path outside it");
  }
}

AtomicOutputFile::AtomicOutputFile(const fs::path& path, const char* what,
                                   std::optional<FileIdentity> input, ExistingOutput existing)
    : path_(path), what_(what), input_(input), existing_(existing) {
  check_replaceable_output(path_, what_, input_, existing_);
  for (unsigned attempt = 0; fd_ < 0; ++attempt) {
    temp_path_ = temp_name(path_, attempt);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt >= 100)) {
      const int error = errno;
      throw IoError(std::string("cannot create ") + quoted_path(temp_path_) + " for " + what_ +
                    " " + quoted_path(path_) + ": " + reason(error) +
                    "; check that the directory exists and is writable");
    }
  }
  // A replaced file keeps its permissions.
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd_, st.st_mode & 07777);
}

AtomicOutputFile::~AtomicOutputFile() {
  close_quietly(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicOutputFile::write(const void* data, std::size_t bytes) {
  const auto* cursor = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::write(fd_, cursor, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      const int error = put < 0 ? errno : ENOSPC;
      throw IoError("cannot write " + quoted_path(temp_path_) + ": " + reason(error) +
                    "; is the disk full?");
    }
    cursor += put;
    bytes -= static_cast<std::size_t>(put);
  }
}

void AtomicOutputFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  const auto* cursor = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::pwrite(fd_, cursor, bytes, static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      const int error = put < 0 ? errno : ENOSPC;
      throw IoError("cannot write " + quoted_path(temp_path_) + ": " + reason(error));
    }
    cursor += put;
    offset += static_cast<std::uint64_t>(put);
    bytes -= static_cast<std::size_t>(put);
  }
}

void AtomicOutputFile::move_into_place() {
  if (existing_ == ExistingOutput::kRefuse) {
    // Never over a file that appeared after the check (Note [Replacing an output]).
    if (::syscall(SYS_renameat2, AT_FDCWD, temp_path_.c_str(), AT_FDCWD, path_.c_str(),
                  RENAME_NOREPLACE) == 0) {
      return;
    }
    if (errno == EEXIST) refuse_existing(path_, what_);
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
      const int error = errno;
      throw IoError("cannot rename " + quoted_path(temp_path_) + " to " + quoted_path(path_) +
                    ": " + reason(error));
    }
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    throw IoError("cannot rename " + quoted_path(temp_path_) + " to " + quoted_path(path_) + ": " +
                  reason(error));
  }
}

void AtomicOutputFile::commit() {
  ZT_CHECK(!committed_, "output committed twice");
  if (::fsync(fd_) != 0 || ::close(std::exchange(fd_, -1)) != 0) {
    const int error = errno;
    throw IoError("cannot write " + quoted_path(temp_path_) + ": " + reason(error) +
                  "; is the disk full?");
  }
  // The target may have changed while we wrote (a FIFO or link put in its place).
  check_replaceable_output(path_, what_, input_, existing_);
  move_into_place();
  committed_ = true;
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // the rename itself survives a crash
    close_quietly(dir);
  }
}

}  // namespace zt::data
