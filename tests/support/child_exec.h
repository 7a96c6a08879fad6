// What every test harness that runs a program in a forked child needs: the environment
// changes applied in the child, exec, and reaping with a bound (killing past it).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace zt::testing {

// Environment changes for the child: a value sets the variable, nullopt unsets it.
using EnvChanges = std::vector<std::pair<std::string, std::optional<std::string>>>;

// In the child, before exec (or before running the code under test).
inline void apply_env_changes(const EnvChanges& env) {
  for (const auto& [name, value] : env) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
}

// In the child: runs argv (argv[0] looked up on PATH); exit 127 when it cannot.
[[noreturn]] inline void exec_argv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "exec %s failed\n", args[0]);
  ::_exit(127);
}

// Waits for `pid` until `deadline`; past it SIGKILLs `kill_target` (the pid, or -pid for its
// group) and returns nullopt. Otherwise the exit code, 128 + signal for a signalled exit.
inline std::optional<int> reap_before(pid_t pid, std::chrono::steady_clock::time_point deadline,
                                      pid_t kill_target) {
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(kill_target, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling an exit, bounded
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace zt::testing
