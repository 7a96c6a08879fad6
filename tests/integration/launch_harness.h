// Test harness for the launcher: runs run_launcher in a forked child whose stdout and
// stderr go to files, waits for it with a bound, and checks that processes are gone.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "runtime/launch/launcher.h"
#include "support/child_exec.h"

namespace zt::launch::testing {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh directory under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "zt_launch_XXXXXX";
    path_ = ::mkdtemp(pattern.data());
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct LaunchResult {
  int exit_code = -1;  // -1 when it had to be killed (a test failure)
  std::string out;
  std::string err;
  Clock::duration elapsed{};
};

// Environment changes applied in the launcher's process only: a value sets, nullopt unsets.
using zt::testing::EnvChanges;

// One run_launcher call in a forked child, as `zerotrain launch` would run it: errors are
// printed as main prints them and become the exit code.
class LauncherProcess {
 public:
  LauncherProcess(const LaunchOptions& options, const TempDir& dir, const EnvChanges& env = {})
      : out_path_(dir / "launcher.out"), err_path_(dir / "launcher.err"), start_(Clock::now()) {
    // Unflushed stdio buffers would be copied into the child and end up in its files.
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) run_child(options, env);
    EXPECT_GT(pid_, 0) << "fork failed";
  }
  ~LauncherProcess() {
    if (pid_ > 0 && !done_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  LauncherProcess(const LauncherProcess&) = delete;
  LauncherProcess& operator=(const LauncherProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Polls the launcher's stderr until it contains text; false after the bound.
  bool wait_for_stderr(const std::string& text, Clock::duration bound = 10s) const {
    const auto deadline = Clock::now() + bound;
    while (read_file(err_path_).find(text) == std::string::npos) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  // Waits at most `timeout` for the launcher to exit (then kills it: a failed test).
  LaunchResult wait(Clock::duration timeout = 30s) {
    LaunchResult result;
    const std::optional<int> code = zt::testing::reap_before(pid_, Clock::now() + timeout, pid_);
    if (!code) ADD_FAILURE() << "the launcher did not exit within the test's bound; killed it";
    done_ = true;
    result.elapsed = Clock::now() - start_;
    result.exit_code = code.value_or(-1);
    result.out = read_file(out_path_);
    result.err = read_file(err_path_);
    return result;
  }

 private:
  [[noreturn]] void run_child(const LaunchOptions& options, const EnvChanges& env) {
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0 || err < 0) ::_exit(99);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    zt::testing::apply_env_changes(env);
    int code = kExitRuntime;
    try {
      code = run_launcher(options);
    } catch (const Error& e) {
      std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
      code = e.exit_code();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "zerotrain: error: %s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }

  std::string out_path_;
  std::string err_path_;
  Clock::time_point start_;
  pid_t pid_ = -1;
  bool done_ = false;
};

inline LaunchResult launch(const LaunchOptions& options, const TempDir& dir,
                           const EnvChanges& env = {}) {
  LauncherProcess launcher(options, dir, env);
  return launcher.wait();
}

inline LaunchOptions sh_ranks(int nproc, const std::string& script) {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.rank_command = {"/bin/sh", "-c", script};
  return options;
}

// Whether pid no longer runs. A zombie counts as gone: once its parent is dead it is
// init's to reap, which a container's init may never do.
inline bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

// The pids (one per line) the ranks wrote to path.
inline std::vector<pid_t> read_pids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  for (long pid = 0; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Polls until every pid is gone or the deadline passes; returns the ones still there.
inline std::vector<pid_t> survivors(const std::vector<pid_t>& pids, Clock::duration bound = 5s) {
  const auto deadline = Clock::now() + bound;
  for (;;) {
    std::vector<pid_t> alive;
    for (pid_t pid : pids) {
      if (!process_gone(pid)) alive.push_back(pid);
    }
    if (alive.empty() || Clock::now() >= deadline) return alive;
    std::this_thread::sleep_for(10ms);
  }
}

inline double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace zt::launch::testing

namespace zt::launch::testing {

// A bare FIFO for ranks to meet on: opening one end blocks until the other is open too.
inline std::string make_fifo(const std::string& path) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << "mkfifo " << path;
  return path;
}

// A FIFO the ranks write "ready" lines to, so a test acts only once they reached a point.
class ReadyFifo {
 public:
  explicit ReadyFifo(std::string path) : path_(std::move(path)) {
    EXPECT_EQ(::mkfifo(path_.c_str(), 0600), 0) << "mkfifo " << path_;
    read_fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    // Our own writer keeps poll() from reporting a hang-up between two ranks' writes.
    write_fd_ = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    EXPECT_GE(read_fd_, 0);
    EXPECT_GE(write_fd_, 0);
  }
  ~ReadyFifo() {
    ::close(read_fd_);
    ::close(write_fd_);
  }
  ReadyFifo(const ReadyFifo&) = delete;
  ReadyFifo& operator=(const ReadyFifo&) = delete;

  const std::string& path() const { return path_; }

  // Whether `count` lines arrived within the bound.
  bool wait_for_lines(int count, Clock::duration bound = 10s) {
    const auto deadline = Clock::now() + bound;
    std::string seen;
    while (std::count(seen.begin(), seen.end(), '\n') < count) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{read_fd_, POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[256];
      const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
      if (n > 0) seen.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  std::string path_;
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace zt::launch::testing
