// FlightDumpSignals: a self-pipe and one thread reading it.
#include "runtime/engine/flight_dump_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace zt::engine {
namespace {

std::atomic<int> g_dump_write_fd{-1};

// Asks the thread to leave: a byte no signal has.
constexpr unsigned char kStopByte = 0;

void on_dump_signal(int signo) {
  const int saved_errno = errno;
  const int fd = g_dump_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signo);
    // A full pipe already holds a request; dropping this byte loses only a repeat.
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

constexpr int kDumpSignals[] = {SIGUSR1, SIGTERM, SIGINT};

std::string reason_of(int signo) {
  switch (signo) {
    case SIGUSR1:
      return "SIGUSR1: a dump asked for while the rank runs";
    case SIGTERM:
      return "SIGTERM: the rank was told to stop";
    default:
      return "SIGINT: the rank was interrupted";
  }
}

}  // namespace

std::unique_ptr<FlightDumpSignals> FlightDumpSignals::install(
    std::function<void(const std::string& reason)> dump) {
  if (g_dump_write_fd.load() >= 0) return nullptr;
  try {
    return std::make_unique<FlightDumpSignals>(std::move(dump));
  } catch (const Error&) {
    return nullptr;  // another came first, between the look and the claim
  }
}

FlightDumpSignals::FlightDumpSignals(std::function<void(const std::string& reason)> dump)
    : dump_(std::move(dump)) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw IoError("cannot create the flight record's signal pipe: " +
                  std::generic_category().message(errno));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  int expected = -1;
  if (!g_dump_write_fd.compare_exchange_strong(expected, write_fd_)) {
    ::close(read_fd_);
    ::close(write_fd_);
    throw Error("only one FlightDumpSignals may exist at a time");
  }
  struct sigaction handler {};
  handler.sa_handler = on_dump_signal;
  sigemptyset(&handler.sa_mask);
  handler.sa_flags = SA_RESTART;
  for (int signo : kDumpSignals) {
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    // SIGUSR1 is zerotrain's own request; the others keep an ignore they inherited (nohup, a
    // script's `&`), as a process that finds them ignored should.
    if (signo != SIGUSR1 && current.sa_handler == SIG_IGN) continue;
    saved_.push_back(SavedAction{signo, current});
    ::sigaction(signo, &handler, nullptr);
  }
  // Unblocked here and in the thread below (which inherits this mask): a SIGUSR1 the
  // launcher sent while it was blocked arrives now, with the handler in place.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ::pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
  thread_ = std::thread([this] { serve(); });
}

FlightDumpSignals::~FlightDumpSignals() {
  for (const SavedAction& saved : saved_) ::sigaction(saved.signo, &saved.action, nullptr);
  g_dump_write_fd.store(-1);
  const unsigned char stop = kStopByte;
  [[maybe_unused]] const ssize_t written = ::write(write_fd_, &stop, 1);
  thread_.join();
  ::close(read_fd_);
  ::close(write_fd_);
}

void FlightDumpSignals::restore(int signo) {
  for (const SavedAction& saved : saved_) {
    if (saved.signo == signo) ::sigaction(signo, &saved.action, nullptr);
  }
}

void FlightDumpSignals::serve() {
  for (;;) {
    pollfd fd{read_fd_, POLLIN, 0};
    if (::poll(&fd, 1, -1) < 0 && errno != EINTR) return;
    unsigned char buffer[16];
    const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n <= 0) continue;  // EAGAIN or EINTR: poll again
    for (ssize_t i = 0; i < n; ++i) {
      const int signo = buffer[i];
      if (signo == kStopByte) return;
      dump_(reason_of(signo));
      if (signo == SIGUSR1) continue;
      // The signal's own course, now that the record is out: the disposition found at
      // install (the default ends the process as killed by it).
      restore(signo);
      ::kill(::getpid(), signo);
      return;
    }
  }
}

}  // namespace zt::engine
