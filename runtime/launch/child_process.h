// ChildProcess: one spawned command in its own process group, its stdout and stderr on
// pipes; signalling that group and reaping the process so no zombie or orphan is left.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/launch/unique_fd.h"

namespace zt::launch {

// How a process ended: an exit status, or the signal that killed it.
struct ExitStatus {
  bool signaled = false;
  int value = 0;  // the exit status, or the signal number when signaled

  bool success() const { return !signaled && value == 0; }
  // "exited with status 3" or "was killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

// "SIGKILL" for 9; "signal 77" for a number the C library has no name for.
std::string signal_name(int signo);

class ChildProcess {
 public:
  // Starts argv[0] (looked up on PATH) with exactly `environment` ("KEY=value" entries),
  // stdin from /dev/null, stdout and stderr on fresh pipes, in a new process group whose
  // id is its pid. Throws IoError naming the command when it cannot be started.
  static ChildProcess spawn(const std::vector<std::string>& argv,
                            const std::vector<std::string>& environment);

  // A child still running is killed (SIGKILL to its group) and reaped: never a zombie.
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The read ends of its stdout and stderr pipes (each can be taken once).
  UniqueFd take_stdout() { return std::move(stdout_); }
  UniqueFd take_stderr() { return std::move(stderr_); }

  // Sends signo to its process group (or to it alone if it left the group); does nothing
  // once it has been reaped, so a recycled pid is never signalled.
  void signal_group(int signo);

  // Without blocking: if it has exited, kills what is left of its process group (see
  // Note [A rank's process group ends with it]), reaps it and returns how it ended.
  const std::optional<ExitStatus>& poll();
  const std::optional<ExitStatus>& status() const { return status_; }
  bool running() const { return !status_.has_value(); }

 private:
  ChildProcess(pid_t pid, UniqueFd stdout_read, UniqueFd stderr_read);
  void reap_blocking();
  void kill_and_reap() noexcept;

  pid_t pid_ = -1;
  UniqueFd stdout_;
  UniqueFd stderr_;
  std::optional<ExitStatus> status_;
};

}  // namespace zt::launch
