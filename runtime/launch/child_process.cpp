// ChildProcess: posix_spawn with pipes and a process group, group signals, and reaping
// that keeps the pid (and so the group id) reserved until the group has been killed.
#include "runtime/launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>  // sigabbrev_np
#include <system_error>
#include <utility>

#include "core/error.h"

namespace zt::launch {
namespace {

// Note [A rank's process group ends with it]
// A rank is usually a shell or a program that starts helpers; signalling only its pid
// would leave those helpers running, orphaned, and holding our stdout/stderr pipes open
// (so the relay would never see EOF). Each rank therefore leads its own process group,
// every signal goes to the whole group, and when the leader exits we SIGKILL whatever is
// left of the group before reaping the leader. Reaping last matters: while the leader is
// an unreaped zombie its pid, which is the group id, cannot be given to another process,
// so kill(-pid) can only reach processes we spawned.

// std::strerror is not thread-safe; the generic category's message is.
std::string errno_text(int err) { return std::generic_category().message(err); }

// The raw argv/envp arrays posix_spawn wants, pointing into the caller's strings.
std::vector<char*> c_string_array(const std::vector<std::string>& strings) {
  std::vector<char*> array;
  array.reserve(strings.size() + 1);
  for (const std::string& s : strings) array.push_back(const_cast<char*>(s.c_str()));
  array.push_back(nullptr);
  return array;
}

// A pipe whose both ends close on exec; the child gets its write end through dup2, which
// clears the flag on the copy only.
std::pair<UniqueFd, UniqueFd> make_pipe(const std::string& what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw IoError("cannot create a pipe for " + what + ": " + errno_text(errno));
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // Only our end is non-blocking: the child must see an ordinary blocking stdout.
  const int flags = ::fcntl(read_end.get(), F_GETFL);
  ::fcntl(read_end.get(), F_SETFL, flags | O_NONBLOCK);
  return {std::move(read_end), std::move(write_end)};
}

// RAII for the two posix_spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;

  SpawnSetup(int stdout_write, int stderr_write) {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_write, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, stderr_write, STDERR_FILENO);
    // SIGUSR1 (the launcher's "write your flight record") starts blocked: it waits until a
    // rank's session has its handler (Note [Flight records on signals]) instead of killing a
    // rank that is still starting; a program that never takes it just never sees it.
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    // The launcher ignores SIGPIPE (a closed terminal must not kill it and orphan the
    // ranks); ignored signals survive exec, so give the child the default back.
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGXFSZ);
    posix_spawnattr_setsigmask(&attr, &blocked);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

ExitStatus exit_status_from_wait(int wait_status) {
  if (WIFSIGNALED(wait_status)) return ExitStatus{true, WTERMSIG(wait_status)};
  return ExitStatus{false, WEXITSTATUS(wait_status)};
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signaled) {
    return "was killed by signal " + std::to_string(value) + " (" + signal_name(value) + ")";
  }
  return "exited with status " + std::to_string(value);
}

std::string signal_name(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  if (abbrev == nullptr) return "signal " + std::to_string(signo);
  return std::string("SIG") + abbrev;
}

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& environment) {
  ZT_CHECK(!argv.empty(), "ChildProcess::spawn needs a command");
  auto [stdout_read, stdout_write] = make_pipe("the stdout of `" + argv[0] + "`");
  auto [stderr_read, stderr_write] = make_pipe("the stderr of `" + argv[0] + "`");
  SpawnSetup setup(stdout_write.get(), stderr_write.get());
  std::vector<char*> c_argv = c_string_array(argv);
  std::vector<char*> c_env = c_string_array(environment);
  pid_t pid = -1;
  // glibc's posix_spawnp reports a failed exec (no such file, not executable) as its
  // return value, so a wrong command is an error here rather than a rank exiting 127.
  const int err = ::posix_spawnp(&pid, argv[0].c_str(), &setup.actions, &setup.attr, c_argv.data(),
                                 c_env.data());
  if (err != 0) {
    throw IoError("cannot start `" + argv[0] + "`: " + errno_text(err) +
                  " (check the command's path and that it is executable)");
  }
  return ChildProcess(pid, std::move(stdout_read), std::move(stderr_read));
}

ChildProcess::ChildProcess(pid_t pid, UniqueFd stdout_read, UniqueFd stderr_read)
    : pid_(pid), stdout_(std::move(stdout_read)), stderr_(std::move(stderr_read)) {}

ChildProcess::~ChildProcess() { kill_and_reap(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    stdout_ = std::move(other.stdout_);
    stderr_ = std::move(other.stderr_);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

void ChildProcess::signal_group(int signo) {
  if (pid_ <= 0 || status_) return;
  // ESRCH: the child moved itself to another group (setsid); it is still our child.
  if (::kill(-pid_, signo) != 0 && errno == ESRCH) ::kill(pid_, signo);
}

const std::optional<ExitStatus>& ChildProcess::poll() {
  if (pid_ <= 0 || status_) return status_;
  siginfo_t info{};
  // WNOWAIT leaves it a zombie, keeping its pid reserved while we kill its group.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    ZT_CHECK(errno == EINTR, "waitid on a rank we spawned failed: " + errno_text(errno));
    return status_;
  }
  if (info.si_pid == 0) return status_;  // still running
  reap_blocking();
  return status_;
}

void ChildProcess::reap_blocking() {
  ::kill(-pid_, SIGKILL);  // Note [A rank's process group ends with it]
  int wait_status = 0;
  pid_t reaped = -1;
  do {
    reaped = ::waitpid(pid_, &wait_status, 0);
  } while (reaped < 0 && errno == EINTR);
  // ECHILD would mean someone else reaped our child; report it as killed rather than lie.
  status_ = reaped == pid_ ? exit_status_from_wait(wait_status) : ExitStatus{true, SIGKILL};
}

void ChildProcess::kill_and_reap() noexcept {
  if (pid_ <= 0 || status_) return;
  signal_group(SIGKILL);
  reap_blocking();
}

}  // namespace zt::launch
