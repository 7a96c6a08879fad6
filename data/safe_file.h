// Files that prepare-data, exports and token-file writers touch, opened so that nothing
// already saved is lost: inputs must be regular files, outputs are written to a temp file
// beside the target and moved into place only when the target is absent (or, when allowed, a
// regular file).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>

namespace zt::data {

// "'<path>'": how messages name a file.
std::string quoted_path(const std::filesystem::path& path);

// Which file a path names (device and inode), to tell that two paths are the same file.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// A regular file opened for reading. `open` follows symbolic links but refuses anything
// that is not a regular file (directories, FIFOs, devices such as /dev/zero, sockets),
// checked by stat before any byte is read. `what` names the file in messages ("input
// text"). Throws IoError naming the path.
class InputFile {
 public:
  // `missing_hint` ends the message when the path names nothing ("check the path").
  static InputFile open(const std::filesystem::path& path, const char* what,
                        const char* missing_hint = "check the path");
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  // Up to `capacity` bytes into `buffer`; 0 at the end of the file.
  std::size_t read_some(void* buffer, std::size_t capacity);
  // Exactly `bytes` bytes from `offset` into `buffer` (the file position is unchanged);
  // throws IoError naming the file when it ends first.
  void read_at(std::uint64_t offset, void* buffer, std::size_t bytes) const;
  const std::filesystem::path& path() const { return path_; }
  const FileIdentity& identity() const { return identity_; }
  std::uint64_t size_bytes() const { return size_bytes_; }

 private:
  InputFile(std::filesystem::path path, int fd, FileIdentity identity, std::uint64_t size)
      : path_(std::move(path)), fd_(fd), identity_(identity), size_bytes_(size) {}
  std::filesystem::path path_;
  int fd_ = -1;
  FileIdentity identity_;
  std::uint64_t size_bytes_ = 0;
};

// What an output does to a regular file already at its path. A file the runtime owns (a
// checkpoint shard, a manifest) is replaced; a file a command makes for the user (prepare-data's
// token file, an export and its config.json) is refused unless the user passed --overwrite,
// since it may be work that nothing else recreates (the folder a fine-tune started from).
enum class ExistingOutput { kReplace, kRefuse };

// Note [Replacing an output]
// An output path may name nothing yet (it is created) or a regular file. With
// ExistingOutput::kReplace that file is replaced atomically: written to
// "<name>.tmp.<pid>.<n>" in the same directory, fsynced, renamed over the target, the
// directory fsynced, so a failure before the rename leaves the old file as it was. With
// ExistingOutput::kRefuse an existing file is refused before a byte is written, and the
// finished temp file is moved in with renameat2(RENAME_NOREPLACE), so a file that appears
// meanwhile is refused too, never replaced (a filesystem without that flag gets the check
// again, then a plain rename). Anything else is refused before a byte is written: a
// directory, a FIFO, a device (/dev/null), a socket, and a symbolic link, even one to a
// regular file, because replacing the link would silently drop what it points to and
// writing through it would change a file elsewhere; the error says to pass the link's
// target instead. An output that is the same file as an input (same path, a hard link)
// is refused too: replacing it would destroy the input it is made from.
class AtomicOutputFile {
 public:
  // Checks `path` as the note says (`input`, when given, is the file it must not be) and
  // creates the temp file. `what` names the file in messages ("token file").
  AtomicOutputFile(const std::filesystem::path& path, const char* what,
                   std::optional<FileIdentity> input = std::nullopt,
                   ExistingOutput existing = ExistingOutput::kReplace);
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();  // removes the temp file unless committed

  void write(const void* data, std::size_t bytes);
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);
  // Makes the contents durable and moves them to the target path.
  void commit();

 private:
  void move_into_place();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  const char* what_;
  std::optional<FileIdentity> input_;
  ExistingOutput existing_;
  int fd_ = -1;
  bool committed_ = false;
};

// Throws IoError unless `path` is absent or (with ExistingOutput::kReplace) a regular file
// that is not `input` (the checks of Note [Replacing an output]); `what` names it in messages.
void check_replaceable_output(const std::filesystem::path& path, const char* what,
                              std::optional<FileIdentity> input,
                              ExistingOutput existing = ExistingOutput::kReplace);

// Throws IoError naming both paths when `path`, its symbolic links followed (a link at the
// end too, even a dangling one), is `directory` or lies inside it: a command's output may
// never change what it reads (a checkpoint's manifest). `what` names the output
// ("safetensors export"), `directory_what` the directory ("checkpoint").
void check_output_outside(const std::filesystem::path& path, const char* what,
                          const std::filesystem::path& directory, const char* directory_what);

}  // namespace zt::data
