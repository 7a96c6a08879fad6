// SignalPipe: the self-pipe trick. While it lives, SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
// SIGCHLD only write their number to a pipe the launcher's poll loop reads; nothing else
// happens in the handler. SIGPIPE is ignored meanwhile. The previous handlers come back after.
#pragma once

#include <signal.h>

#include <vector>

#include "runtime/launch/unique_fd.h"

namespace zt::launch {

class SignalPipe {
 public:
  // Installs the handlers; only one SignalPipe may exist at a time in a process.
  // SIGINT, SIGTERM, SIGHUP and SIGUSR1 are left alone when they were ignored on entry (as under
  // nohup or `&` in a script): the convention is that such a process does not catch them.
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Readable when a signal arrived; poll() it.
  int fd() const { return read_.get(); }
  // The signals that arrived since the last call, oldest first (SIGCHLD included).
  std::vector<int> drain();

 private:
  struct SavedAction {
    int signo;
    struct sigaction action;
  };

  UniqueFd read_;
  UniqueFd write_;
  std::vector<SavedAction> saved_;
};

}  // namespace zt::launch
