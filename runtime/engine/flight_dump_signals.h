// FlightDumpSignals: while it lives, SIGUSR1 makes the rank write its flight record and go
// on, and SIGTERM or SIGINT make it write the record before the signal takes its usual
// course (Note [Flight records on signals]).
#pragma once

#include <signal.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace zt::engine {

// Note [Flight records on signals]
// A hang is seen from outside: the launcher's timeout, a peer's failure, or a person who
// runs `kill`. So the record must come out of a rank that is stuck in a collective, where
// its own error path never runs. The handlers only write the signal's number to a pipe (the
// one thing a handler may safely do); a thread of the session waits on the pipe and writes
// the record. SIGUSR1 ("show me where you are") leaves the run going. SIGTERM and SIGINT
// (the launcher stopping the survivors of a failed rank, Slurm's preemption, Ctrl-C) write
// the record, then put back the disposition found at install and raise the signal again, so
// the rank still ends as that signal says (killed by SIGTERM, or the handler that was there).
// A signal ignored at install stays ignored. `zerotrain launch` starts its ranks with SIGUSR1
// blocked, so one it forwards before a rank's session is up waits instead of killing the rank
// (SIGUSR1's default); the session unblocks it once its handler is in place.
class FlightDumpSignals {
 public:
  // Installs the handlers; `dump(reason)` runs on the session's thread, never in a handler.
  // Only one may live at a time in a process: null when one already does (ranks as threads of
  // one test process share the signals, and the first session to come takes them).
  static std::unique_ptr<FlightDumpSignals> install(
      std::function<void(const std::string& reason)> dump);
  explicit FlightDumpSignals(std::function<void(const std::string& reason)> dump);
  ~FlightDumpSignals();
  FlightDumpSignals(const FlightDumpSignals&) = delete;
  FlightDumpSignals& operator=(const FlightDumpSignals&) = delete;

 private:
  struct SavedAction {
    int signo;
    struct sigaction action;
  };

  void serve();
  // Puts back the disposition `signo` had at install.
  void restore(int signo);

  std::function<void(const std::string&)> dump_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::vector<SavedAction> saved_;
  std::thread thread_;
};

}  // namespace zt::engine
