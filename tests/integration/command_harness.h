// Running real programs from tests: CommandProcess starts an argv with extra environment,
// its stdout and stderr going to files, and waits for it with a bound (killing its
// process group after it); run_command does both at once.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/test_paths.h"
#include "tests/integration/launch_harness.h"

namespace zt::launch::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when it had to be killed (a test failure)
  std::string out;
  std::string err;
  Clock::duration elapsed{};
};

class CommandProcess {
 public:
  // out_name: the files are dir/out_name.out and dir/out_name.err.
  CommandProcess(std::vector<std::string> argv, const TempDir& dir, const std::string& out_name,
                 const EnvChanges& env = {})
      : out_path_(dir / (out_name + ".out")),
        err_path_(dir / (out_name + ".err")),
        start_(Clock::now()) {
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) exec_child(argv, env);
    EXPECT_GT(pid_, 0) << "fork failed";
  }
  // A process still running is asked to stop (SIGTERM: a launcher then stops its ranks,
  // which lead process groups of their own), and killed with its group 15 s later.
  ~CommandProcess() {
    if (pid_ > 0 && !done_) {
      ::kill(pid_, SIGTERM);
      const auto deadline = Clock::now() + 15s;
      while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
        if (Clock::now() >= deadline) {
          ::kill(-pid_, SIGKILL);
          ::waitpid(pid_, nullptr, 0);
          break;
        }
        std::this_thread::sleep_for(10ms);  // polling a process's exit, with a deadline
      }
    }
  }
  CommandProcess(const CommandProcess&) = delete;
  CommandProcess& operator=(const CommandProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string err_so_far() const { return read_file(err_path_); }

  // Polls the process's stderr until it contains text; false after the bound.
  bool wait_for_stderr(const std::string& text, Clock::duration bound) const {
    const auto deadline = Clock::now() + bound;
    while (read_file(err_path_).find(text) == std::string::npos) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(20ms);  // polling a file another process writes, bounded
    }
    return true;
  }

  // Waits at most `timeout` for the process to exit, then kills its group (a failure).
  CommandResult wait(Clock::duration timeout) {
    CommandResult result;
    const std::optional<int> code = zt::testing::reap_before(pid_, Clock::now() + timeout, -pid_);
    if (!code) ADD_FAILURE() << "the command did not exit within the test's bound; killed it";
    done_ = true;
    result.elapsed = Clock::now() - start_;
    result.exit_code = code.value_or(-1);
    result.out = read_file(out_path_);
    result.err = read_file(err_path_);
    return result;
  }

 private:
  [[noreturn]] void exec_child(const std::vector<std::string>& argv, const EnvChanges& env) {
    ::setpgid(0, 0);  // its own group, so a bound that expires takes its children too
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0 || err < 0) ::_exit(99);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    zt::testing::apply_env_changes(env);
    zt::testing::exec_argv(argv);
  }

  std::string out_path_;
  std::string err_path_;
  Clock::time_point start_;
  pid_t pid_ = -1;
  bool done_ = false;
};

inline CommandResult run_command(std::vector<std::string> argv, const TempDir& dir,
                                 const EnvChanges& env = {}, Clock::duration timeout = 60s) {
  CommandProcess process(std::move(argv), dir, "command", env);
  return process.wait(timeout);
}

// Expects run_dir/flight/rank-N.json to be a file for every rank of `ranks` but `except`
// (-1: none); `context` (the job's stderr) goes with each failure.
inline void expect_flight_records(const std::string& run_dir, int ranks, const std::string& context,
                                  int except = -1) {
  for (int rank = 0; rank < ranks; ++rank) {
    if (rank == except) continue;
    EXPECT_TRUE(std::filesystem::is_regular_file(run_dir + "/flight/rank-" + std::to_string(rank) +
                                                 ".json"))
        << "rank " << rank << "\n"
        << context;
  }
}

// The zerotrain binary under test.
inline std::string zerotrain_exe() { return zt::testing::zerotrain_binary(); }
inline std::string tiny_config() { return zt::testing::source_dir() + "/configs/tiny.toml"; }

// The "loss" values of a metrics.jsonl, as written (bitwise comparison of two runs).
inline std::vector<std::string> losses_of(const std::string& metrics_path) {
  std::vector<std::string> losses;
  std::istringstream lines(read_file(metrics_path));
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find("\"loss\":");
    if (at == std::string::npos) continue;
    const std::size_t begin = line.find_first_not_of(' ', at + 7);
    losses.push_back(line.substr(begin, line.find_first_of(",}", begin) - begin));
  }
  return losses;
}

// A TCP port on 127.0.0.1 that was free a moment ago.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0;
  ::close(fd);
  EXPECT_TRUE(ok) << "could not find a free port";
  return ok ? ntohs(addr.sin_port) : 0;
}

}  // namespace zt::launch::testing
