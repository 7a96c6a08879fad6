// RankSupervisor: one thread, one poll() over the signal pipe and every rank's pipes;
// ranks are reaped when SIGCHLD wakes it, shutdown deadlines bound every wait.
#include "runtime/launch/rank_supervisor.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace zt::launch {
namespace {

// Wakes the loop at least this often even with nothing to do, so that a lost wake-up
// (another library replacing our SIGCHLD handler) costs a second, not a hang.
constexpr int kMaxPollMs = 1000;
// After the last rank is reaped, how long to wait for EOF on pipes a stray grandchild
// that left the rank's process group may still hold.
constexpr std::chrono::milliseconds kDrainTimeout{1000};
// After forwarding SIGUSR1, how long the ranks get to write their flight records before the
// verdict is read (a record is written in milliseconds by a thread of its own).
constexpr std::chrono::milliseconds kFlightRecordWait{2000};

void print_to_stderr(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, kMaxPollMs));
}

std::string ranks_phrase(int count) {
  return std::to_string(count) + (count == 1 ? " rank" : " ranks");
}

// Every line of text (a message and its continuation lines) behind margin.
std::string indented(const std::string& text, const std::string& margin) {
  std::string out = margin;
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += margin;
  }
  return out;
}

// Whether pid is in a stopped state (SIGSTOP or Ctrl-Z: 'T'; a debugger: 't'), from the
// state field that follows the parenthesised command name in /proc/PID/stat.
bool is_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state == 'T' || state == 't';
}

}  // namespace

RankSupervisor::RankSupervisor(std::vector<SupervisedRank> ranks, OutputRelay& relay,
                               SignalPipe& signals, std::chrono::milliseconds grace_period,
                               std::chrono::milliseconds status_interval, RendezvousWatch* watch,
                               FlightVerdict flight_verdict)
    : ranks_(std::move(ranks)),
      relay_(relay),
      signals_(signals),
      grace_period_(grace_period),
      status_interval_(std::max(status_interval, std::chrono::milliseconds(1))),
      next_stopped_check_(Clock::now() + status_interval_),
      reported_stopped_(ranks_.size(), false),
      watch_(watch),
      flight_verdict_(std::move(flight_verdict)) {}

int RankSupervisor::run() {
  for (;;) {
    reap_exited();
    check_rendezvous();
    check_stopped_ranks();
    if (running_count() == 0) {
      if (!drain_deadline_) drain_deadline_ = Clock::now() + kDrainTimeout;
      if (relay_.all_closed() || Clock::now() >= *drain_deadline_) break;
    }
    if (kill_deadline_ && !killed_ && Clock::now() >= *kill_deadline_) {
      kill_stragglers(/*grace_expired=*/true);
    }
    if (verdict_due_ && Clock::now() >= *verdict_due_) print_requested_verdict();
    wait_for_events();
  }
  relay_.close_all();
  if (first_failure_ && !received_signal_) {
    report_failure();
    const ExitStatus& status = first_failure_->status;
    return !status.signaled && status.value == kExitUsage ? kExitUsage : kExitRuntime;
  }
  relay_.write_reported_errors(static_cast<int>(ranks_.size()));
  if (received_signal_) {
    // The ranks wrote their records as SIGTERM or SIGINT stopped them: where a hung job was.
    print_to_stderr(flight_findings("zerotrain launch: the ranks' flight records at " +
                                    signal_name(*received_signal_) + ":\n"));
    return 128 + *received_signal_;
  }
  if (rendezvous_failure_) return kExitRuntime;
  return 0;
}

void RankSupervisor::check_rendezvous() {
  if (watch_ == nullptr || shutting_down()) return;
  if (watch_->check(Clock::now()) != RendezvousWatch::State::kTimedOut) return;
  rendezvous_failure_ = watch_->timeout_message();
  print_to_stderr("zerotrain launch: " + *rendezvous_failure_ + " Stopping the " +
                  ranks_phrase(running_count()) + " here.\n");
  begin_shutdown(SIGTERM);
}

void RankSupervisor::check_stopped_ranks() {
  const auto now = Clock::now();
  if (shutting_down() || now < next_stopped_check_) return;
  while (next_stopped_check_ <= now) next_stopped_check_ += status_interval_;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    const SupervisedRank& r = ranks_[i];
    if (!r.process.running()) continue;
    const bool stopped = is_stopped(r.process.pid());
    if (stopped == reported_stopped_[i]) continue;
    reported_stopped_[i] = stopped;
    const std::string who =
        "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.process.pid()) + ")";
    print_to_stderr(stopped ? "zerotrain launch: " + who +
                                  " is stopped (SIGSTOP, Ctrl-Z or a debugger); its peers wait "
                                  "for it until runtime.comm_timeout_s. `kill -CONT " +
                                  std::to_string(r.process.pid()) + "` resumes it.\n"
                            : "zerotrain launch: " + who + " runs again.\n");
  }
}

void RankSupervisor::wait_for_events() {
  std::vector<pollfd> fds{pollfd{signals_.fd(), POLLIN, 0}};
  relay_.append_pollfds(fds);
  if (::poll(fds.data(), fds.size(), poll_timeout_ms()) < 0) {
    if (errno == EINTR) return;
    throw IoError("poll() on the ranks' output pipes failed: " +
                  std::generic_category().message(errno));
  }
  if (fds[0].revents != 0) handle_signals();
  relay_.on_ready(fds);
}

int RankSupervisor::poll_timeout_ms() const {
  int timeout = kMaxPollMs;
  if (kill_deadline_ && !killed_) timeout = std::min(timeout, ms_until(*kill_deadline_));
  if (drain_deadline_) timeout = std::min(timeout, ms_until(*drain_deadline_));
  if (verdict_due_) timeout = std::min(timeout, ms_until(*verdict_due_));
  if (!shutting_down()) {
    timeout = std::min(timeout, ms_until(next_stopped_check_));
    if (watch_ != nullptr) {
      if (const auto due = watch_->next_check()) timeout = std::min(timeout, ms_until(*due));
    }
  }
  return timeout;
}

void RankSupervisor::handle_signals() {
  for (int signo : signals_.drain()) {
    if (signo == SIGCHLD) continue;  // the next reap_exited() finds who exited
    if (signo == SIGUSR1) {
      request_flight_records();
      continue;
    }
    if (shutting_down()) {
      // A second Ctrl-C means "now": skip the rest of the grace period.
      print_to_stderr("zerotrain launch: received " + signal_name(signo) +
                      " again; killing the ranks.\n");
      kill_stragglers(/*grace_expired=*/false);
      continue;
    }
    received_signal_ = signo;
    print_to_stderr("zerotrain launch: received " + signal_name(signo) + "; forwarding it to " +
                    ranks_phrase(running_count()) + " (a second signal kills them at once).\n");
    begin_shutdown(signo);
  }
}

void RankSupervisor::reap_exited() {
  for (SupervisedRank& r : ranks_) {
    if (!r.process.running()) continue;
    const std::optional<ExitStatus>& status = r.process.poll();
    if (!status || status->success() || shutting_down()) continue;
    first_failure_ = Failure{r.rank, r.process.pid(), *status, running_count()};
    begin_shutdown(SIGTERM);
  }
}

void RankSupervisor::begin_shutdown(int signo) {
  shutdown_signal_ = signo;
  for (SupervisedRank& r : ranks_) r.process.signal_group(signo);
  kill_deadline_ = Clock::now() + grace_period_;
}

void RankSupervisor::kill_stragglers(bool grace_expired) {
  killed_ = true;
  for (SupervisedRank& r : ranks_) {
    if (!r.process.running()) continue;
    if (grace_expired) {
      print_to_stderr("zerotrain launch: rank " + std::to_string(r.rank) + " (pid " +
                      std::to_string(r.process.pid()) + ") is still running " +
                      std::to_string(grace_period_.count()) + " ms after " +
                      signal_name(shutdown_signal_.value_or(SIGTERM)) + "; sending SIGKILL.\n");
    }
    r.process.signal_group(SIGKILL);
  }
}

int RankSupervisor::running_count() const {
  return static_cast<int>(std::count_if(
      ranks_.begin(), ranks_.end(), [](const SupervisedRank& r) { return r.process.running(); }));
}

std::string RankSupervisor::failure_summary() const {
  if (rendezvous_failure_ && !first_failure_) return *rendezvous_failure_;
  if (!first_failure_) return "";
  return "rank " + std::to_string(first_failure_->rank) + " " + first_failure_->status.describe();
}

void RankSupervisor::report_failure() {
  const Failure& f = *first_failure_;
  const std::string name = "rank " + std::to_string(f.rank);
  std::string text = "zerotrain launch: " + name + " (pid " + std::to_string(f.pid) + ") " +
                     f.status.describe() + "; ";
  text += f.stopped_others == 0 ? "no other rank was still running.\n"
                                : "stopped the other " + ranks_phrase(f.stopped_others) + ".\n";
  const std::vector<std::string> tail = relay_.stderr_tail(f.rank);
  const std::vector<ReportedError> errors = relay_.reported_errors();
  if (!tail.empty()) {
    text += "  last lines of " + name + "'s stderr:\n";
    for (const std::string& line : tail) text += "    " + line + "\n";
  }
  // Once each, however many ranks reported it: a config error every rank hits alike.
  for (const ReportedError& error : errors) {
    text += "  " + describe_ranks(error.ranks, static_cast<int>(ranks_.size())) +
            (error.ranks.size() == 1 ? " reported:\n" : " reported the same error:\n");
    text += indented(error.message, "    ") + "\n";
  }
  if (tail.empty() && errors.empty()) text += "  " + name + " wrote nothing to stderr.\n";
  text += flight_findings("  the ranks' flight records say:\n");
  if (watch_ != nullptr && watch_->next_check() && watch_->look()) {
    const std::string missing = watch_->missing_ranks();
    // A rank's own rendezvous timeout may fire just before the watch's: the verdict is the
    // same, so it reads the same whichever clock ran out first.
    if (!missing.empty()) text = "zerotrain launch: " + watch_->timeout_message() + "\n" + text;
  }
  print_to_stderr(text);
}

std::string RankSupervisor::flight_findings(const std::string& heading) const {
  if (!flight_verdict_) return "";
  std::vector<std::string> findings;
  try {
    findings = flight_verdict_();
  } catch (const std::exception& e) {
    // A damaged record must not hide the failure being reported.
    return heading + "    (not read: " + e.what() + ")\n";
  }
  if (findings.empty()) return "";
  std::string text = heading;
  for (const std::string& finding : findings) text += "    - " + finding + "\n";
  return text;
}

void RankSupervisor::request_flight_records() {
  if (shutting_down()) return;  // the stop signal writes them anyway
  print_to_stderr("zerotrain launch: received SIGUSR1; asking " + ranks_phrase(running_count()) +
                  " for their flight records (the run goes on).\n");
  for (SupervisedRank& r : ranks_) {
    if (r.process.running()) r.process.signal_group(SIGUSR1);
  }
  if (flight_verdict_) verdict_due_ = Clock::now() + kFlightRecordWait;
}

void RankSupervisor::print_requested_verdict() {
  verdict_due_.reset();
  const std::string findings = flight_findings("zerotrain launch: the ranks' flight records:\n");
  print_to_stderr(findings.empty() ? "zerotrain launch: no rank wrote a flight record.\n"
                                   : findings);
}

}  // namespace zt::launch
