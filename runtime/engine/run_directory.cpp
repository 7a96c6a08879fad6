// Claiming a run.dir: the lock file and the check for an earlier run's outputs
// (Note [One run per run.dir]).
#include "runtime/engine/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "core/config/config_schema.h"
#include "core/config/config_writer.h"
#include "core/error.h"
#include "data/safe_file.h"
#include "runtime/checkpoint/checkpoint_directory.h"

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

// Whether this run continues an earlier one's outputs (metrics.jsonl keeps the steps up to
// the checkpoint's): a resume from a path does, and "latest" does when it finds a checkpoint
// of the run run.dir/run_id names. "latest" that finds none starts at step 1, a fresh start
// whose outputs would replace the earlier run's, so it is checked as one.
bool continues_earlier_run(const Config& config) {
  const std::string& resume = config.checkpoint.resume;
  if (resume.empty()) return false;
  if (resume != "latest") return true;
  return checkpoint::latest_checkpoint_of_run_dir(config).has_value();
}

void check_no_earlier_outputs(const Config& config, const fs::path& dir, bool continues) {
  if (config.run.overwrite || continues) return;
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
void remove_earlier_outputs(const Config& config, const fs::path& dir, bool continues) {
  if (!config.run.overwrite || continues) return;
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
  // Decided under the lock, so no other run can save a checkpoint in between.
  const bool continues = continues_earlier_run(config);
  check_no_earlier_outputs(config, dir, continues);  // throws; the destructor unlocks
  remove_earlier_outputs(config, dir, continues);
  record_owner(fd);
  return claimed;
}

RunDirectory::~RunDirectory() { ::close(lock_fd_); }

// Every path-valued key of the schema (KeySpec::is_path), so a new one cannot be missed.
Config with_absolute_paths(const Config& config) {
  Config saved = config;
  const auto absolute = [](const std::string& path) {
    std::error_code ec;
    const fs::path made = fs::absolute(path, ec);
    return ec ? path : made.lexically_normal().string();
  };
  for (const SectionSpec& section : config_schema()) {
    for (const KeySpec& key : section.keys) {
      if (!key.is_path) continue;
      const std::string value = std::get<std::string>(key.read(config));
      if (value.empty() || std::ranges::find(key.path_keywords, value) != key.path_keywords.end())
        continue;
      std::string made;
      for (const std::string& entry : path_entries(value)) {
        made += (made.empty() ? "" : "\n") + absolute(entry);
      }
      key.assign(saved, made);
    }
  }
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
