// SignalPipe: async-signal-safe handlers that write one byte per signal to a pipe, and
// installing/restoring them around a launch.
#include "runtime/launch/signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

#include "core/error.h"

namespace zt::launch {
namespace {

// The one piece of global state: a signal handler cannot be given a context, so it finds
// the pipe here. Written only by SignalPipe's constructor and destructor.
std::atomic<int> g_signal_write_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs a lock-free atomic");

void on_signal(int signo) {
  const int saved_errno = errno;
  const int fd = g_signal_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signo);
    // A full pipe already wakes the loop; dropping this byte loses only a repeat.
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

// SIGUSR1 asks for the ranks' flight records (RankSupervisor forwards it, the run goes on).
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};

}  // namespace

SignalPipe::SignalPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw IoError("cannot create the launcher's signal pipe: " +
                  std::generic_category().message(errno));
  }
  read_.reset(fds[0]);
  write_.reset(fds[1]);
  int expected = -1;
  ZT_CHECK(g_signal_write_fd.compare_exchange_strong(expected, write_.get()),
           "only one SignalPipe may exist at a time");

  struct sigaction handler {};
  handler.sa_handler = on_signal;
  sigemptyset(&handler.sa_mask);
  handler.sa_flags = SA_RESTART;
  auto install = [&](int signo, const struct sigaction& action) {
    SavedAction saved{signo, {}};
    ::sigaction(signo, &action, &saved.action);
    saved_.push_back(saved);
  };
  for (int signo : kForwardedSignals) {
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    if (current.sa_handler != SIG_IGN) install(signo, handler);
  }
  // SIGCHLD always: even an inherited SIG_IGN must go, as it makes the kernel reap our
  // children before we can read their exit status.
  struct sigaction child_handler = handler;
  child_handler.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  install(SIGCHLD, child_handler);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  install(SIGPIPE, ignore);
}

SignalPipe::~SignalPipe() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    ::sigaction(it->signo, &it->action, nullptr);
  }
  g_signal_write_fd.store(-1);
}

std::vector<int> SignalPipe::drain() {
  std::vector<int> signals;
  unsigned char buffer[64];
  for (;;) {
    const ssize_t n = ::read(read_.get(), buffer, sizeof buffer);
    if (n > 0) {
      signals.insert(signals.end(), buffer, buffer + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return signals;  // EAGAIN: empty for now
  }
}

}  // namespace zt::launch
