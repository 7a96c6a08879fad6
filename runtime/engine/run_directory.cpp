// Claiming a run.dir: the lock file and the check for an earlier run's outputs
// (Note [One run per run.dir]).
#include "runtime/engine/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "core/config/config_writer.h"
#include "core/error.h"
#include "data/safe_file.h"

namespace zt::engine {
namespace {

namespace fs = std::filesystem;

// Everything a run writes into run.dir (metrics_log, write_config, memory_report,
// memory_profile, the run id); an existing one belongs to an earlier run. Checkpoints are
// not outputs (Note [Checkpoints belong to a run]): neither refused nor removed here, even
// in run.dir/checkpoints.
constexpr const char* kOutputs[] = {"metrics.jsonl", "config.toml", "memory.json",
                                    "memory.html",   "memory",      "run_id"};

std::string reason(int error) { return std::generic_category().message(error); }

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "this host";
  return host;
}

// "pid 1234 on node7", as the owner wrote it into the lock file.
std::string lock_owner(int fd) {
  char text[128] = {};
  const ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string owner = got > 0 ? std::string(text, static_cast<std::size_t>(got)) : "";
  while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
  return owner.empty() ? "a process that has not written its pid yet" : owner;
}

void record_owner(int fd) {
  const std::string owner = "pid " + std::to_string(::getpid()) + " on " + host_name() + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t put = ::pwrite(fd, owner.data(), owner.size(), 0);
  }
}

void check_no_earlier_outputs(const Config& config, const fs::path& dir) {
  // A resumed run continues the earlier run's outputs (metrics.jsonl keeps the steps up to
  // the checkpoint's).
  if (config.run.overwrite || !config.checkpoint.resume.empty()) return;
  for (const char* output : kOutputs) {
    std::error_code ec;
    if (fs::symlink_status(dir / output, ec).type() == fs::file_type::not_found) continue;
    throw ConfigError(where_set(config, "run.dir") + ": run.dir " + data::quoted_path(dir) +
                      " already holds " + data::quoted_path(dir / output) +
                      " from an earlier run; set run.overwrite = true (--set "
                      "run.overwrite=true) to replace it, or choose another run.dir");
  }
}

// run.overwrite on a fresh start: the earlier run's outputs go, all of them, so none is
// left beside the new run's (a resumed run continues them instead).
void remove_earlier_outputs(const Config& config, const fs::path& dir) {
  if (!config.run.overwrite || !config.checkpoint.resume.empty()) return;
  for (const char* output : kOutputs) {
    std::error_code ec;
    fs::remove_all(dir / output, ec);
    if (ec) {
      throw IoError("run.overwrite: cannot remove the earlier run's " +
                    data::quoted_path(dir / output) + ": " + ec.message());
    }
  }
}

}  // namespace

std::unique_ptr<RunDirectory> RunDirectory::claim(const Config& config) {
  const fs::path dir = config.run.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw IoError("cannot create run.dir " + data::quoted_path(dir) + ": " + ec.message() +
                  "; set run.dir to a writable directory");
  }
  const fs::path lock_path = dir / ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    throw IoError("cannot open the lock file " + data::quoted_path(lock_path) +
                  " of run.dir: " + reason(error));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string owner = error == EWOULDBLOCK ? lock_owner(fd) : "";
    ::close(fd);
    if (error != EWOULDBLOCK) {
      throw IoError("cannot lock " + data::quoted_path(lock_path) + ": " + reason(error));
    }
    throw Error("run.dir " + data::quoted_path(dir) + " is in use by another run (" + owner +
                "); wait for it to finish or set run.dir to another directory");
  }
  std::unique_ptr<RunDirectory> claimed(new RunDirectory(dir, fd));
  check_no_earlier_outputs(config, dir);  // throws with the lock released by the destructor
  remove_earlier_outputs(config, dir);
  record_owner(fd);
  return claimed;
}

RunDirectory::~RunDirectory() { ::close(lock_fd_); }

Config with_absolute_paths(const Config& config) {
  Config saved = config;
  std::error_code ec;
  const auto absolute = [&](const std::string& path) {
    const fs::path made = fs::absolute(path, ec);
    return ec ? path : made.lexically_normal().string();
  };
  saved.run.dir = absolute(config.run.dir);
  const auto absolute_entries = [&](const std::string& joined) {
    std::string made;
    for (const std::string& entry : path_entries(joined)) {
      made += (made.empty() ? "" : "\n") + absolute(entry);
    }
    return made;
  };
  saved.data.path = absolute_entries(config.data.path);
  saved.data.val_path = absolute_entries(config.data.val_path);
  if (!config.data.tokenizer.empty()) saved.data.tokenizer = absolute(config.data.tokenizer);
  return saved;
}

void RunDirectory::write_config(const Config& config) const {
  const fs::path path = dir_ / "config.toml";
  std::ofstream out(path, std::ios::trunc);
  out << config_to_toml(with_absolute_paths(config));
  out.close();
  if (!out) throw IoError("cannot write " + data::quoted_path(path) + "; is the disk full?");
}

}  // namespace zt::engine
