// ProgramRun: runs a real program (mpirun, srun, zerotrain) in its own process group with
// stdout and stderr in files, waits with a bound and kills the whole group past it.
// Also: a free TCP port, and the per-step numbers of a run's metrics.jsonl.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_exec.h"

namespace zt::testing {

struct ProgramResult {
  int exit_code = -1;  // -1: killed at the bound (the test has failed already)
  std::string out;
  std::string err;
  double seconds = 0;
  std::string output() const { return "stdout:\n" + out + "\nstderr:\n" + err; }
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs argv (argv[0] looked up on PATH) in `dir` with env changes; output goes to
// dir/<name>.out and dir/<name>.err. Waits at most `bound`, then SIGKILLs the process
// group and fails the test.
inline ProgramResult run_program(const std::vector<std::string>& argv,
                                 const std::filesystem::path& dir, const std::string& name,
                                 const EnvChanges& env = {},
                                 std::chrono::seconds bound = std::chrono::seconds(120)) {
  const std::string out_path = (dir / (name + ".out")).string();
  const std::string err_path = (dir / (name + ".err")).string();
  const auto start = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (std::freopen(out_path.c_str(), "w", stdout) == nullptr) ::_exit(126);
    if (std::freopen(err_path.c_str(), "w", stderr) == nullptr) ::_exit(126);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    zt::testing::apply_env_changes(env);
    zt::testing::exec_argv(argv);
  }
  ProgramResult result;
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return result;
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  const std::optional<int> code = zt::testing::reap_before(pid, start + bound, -pid);
  if (!code)
    ADD_FAILURE() << argv[0] << " did not exit within " << bound.count() << " s; killed it";
  ::kill(-pid, SIGKILL);  // whatever of the group is left (a rank that outlived its parent)
  result.exit_code = code.value_or(-1);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.out = read_text(out_path);
  result.err = read_text(err_path);
  return result;
}

// A TCP port that was free a moment ago on every interface (bind to port 0, read, close).
inline int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) ::close(fd);
  EXPECT_GT(port, 0) << "could not find a free port";
  return port;
}

// The text after `"key": ` in one line of metrics.jsonl, up to the next comma or brace.
inline std::string json_field(const std::string& line, const std::string& key) {
  const std::string quoted_key = "\"" + key + "\": ";
  const std::size_t start = line.find(quoted_key);
  if (start == std::string::npos) return "(no " + key + ")";
  const std::size_t value = start + quoted_key.size();
  return line.substr(value, line.find_first_of(",}", value) - value);
}

// Per step, the numbers that must agree between runs of one config: loss, lr and
// grad_norm as metrics.jsonl prints them (enough digits to round-trip a float, so equal
// text means equal bits).
inline std::vector<std::string> step_numbers(const std::filesystem::path& metrics) {
  std::vector<std::string> steps;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    steps.push_back(json_field(line, "loss") + " " + json_field(line, "lr") + " " +
                    json_field(line, "grad_norm"));
  }
  return steps;
}

}  // namespace zt::testing
