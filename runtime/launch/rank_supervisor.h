// RankSupervisor: the launcher's poll loop over its ranks. It relays their output, reaps
// them, forwards the launcher's signals, and on the first failure stops the others
// (SIGTERM, SIGKILL after the grace period) and reports which rank failed and how. On
// node 0 of several it also runs the RendezvousWatch that names ranks that never joined;
// every status interval it looks for ranks that are stopped (SIGSTOP, a debugger) and says
// so, as their peers would otherwise wait on them in silence. With a flight verdict, the
// ranks' flight records are read after a failure or the launcher's own stop signal (the
// survivors write theirs on SIGTERM) and what they show is printed; SIGUSR1 to the launcher
// is forwarded to every rank, and the verdict printed once they have had time to write.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/launch/child_process.h"
#include "runtime/launch/output_relay.h"
#include "runtime/launch/rendezvous_watch.h"
#include "runtime/launch/signal_pipe.h"

namespace zt::launch {

struct SupervisedRank {
  int rank;
  ChildProcess process;
};

// What the ranks' flight records written since the attempt began show, one finding a line
// (empty: none were written).
using FlightVerdict = std::function<std::vector<std::string>()>;

class RankSupervisor {
 public:
  // relay already holds the ranks' pipes; signals was installed before they were spawned;
  // watch (may be null) must outlive the supervisor.
  RankSupervisor(std::vector<SupervisedRank> ranks, OutputRelay& relay, SignalPipe& signals,
                 std::chrono::milliseconds grace_period, std::chrono::milliseconds status_interval,
                 RendezvousWatch* watch = nullptr, FlightVerdict flight_verdict = nullptr);

  // Returns once every rank is reaped and its output relayed: 0 when all exited 0,
  // 128 + signo when the launcher got signo, 2 when the first rank to fail exited 2 (a
  // usage or config error), 1 when a rank failed otherwise or ranks never joined.
  int run();
  // After run(): how the first failure ended ("rank 1 exited with status 3"), for the
  // restart log; empty when no rank failed.
  std::string failure_summary() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Failure {
    int rank;
    pid_t pid;
    ExitStatus status;
    int stopped_others;  // ranks still running when it failed
  };

  void wait_for_events();
  void handle_signals();
  void reap_exited();
  void check_rendezvous();
  void check_stopped_ranks();
  bool shutting_down() const { return shutdown_signal_.has_value(); }
  void begin_shutdown(int signo);
  // SIGKILL to every rank still running; grace_expired says whether to explain why.
  void kill_stragglers(bool grace_expired);
  int running_count() const;
  int poll_timeout_ms() const;
  void report_failure();
  // The flight records' findings under `heading`, indented; empty without a verdict or
  // records.
  std::string flight_findings(const std::string& heading) const;
  // SIGUSR1: forward it to the ranks and print the verdict once they have written.
  void request_flight_records();
  void print_requested_verdict();

  std::vector<SupervisedRank> ranks_;
  OutputRelay& relay_;
  SignalPipe& signals_;
  std::chrono::milliseconds grace_period_;
  std::chrono::milliseconds status_interval_;
  Clock::time_point next_stopped_check_;
  std::vector<bool> reported_stopped_;  // by index in ranks_: said to be stopped, not resumed
  RendezvousWatch* watch_;
  std::optional<std::string> rendezvous_failure_;  // the watch's message, when it timed out
  std::optional<Failure> first_failure_;
  std::optional<int> received_signal_;  // the launcher's own, when that caused the shutdown
  std::optional<int> shutdown_signal_;  // what the ranks were sent to stop them
  std::optional<Clock::time_point> kill_deadline_;
  bool killed_ = false;
  std::optional<Clock::time_point> drain_deadline_;
  FlightVerdict flight_verdict_;
  std::optional<Clock::time_point> verdict_due_;  // a SIGUSR1's verdict, when to print it
};

}  // namespace zt::launch
