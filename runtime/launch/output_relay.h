// The ranks' output on the launcher's: LineRelay turns one child stream into whole lines
// prefixed "[rank k] "; OutputRelay owns every rank's pipes and reads the ones poll()
// marked ready, and holds back the ranks' "zerotrain: error: " lines so that an error
// every rank reports is shown once. Both are confined to the launcher's supervising thread.
#pragma once

#include <poll.h>

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/launch/reported_errors.h"
#include "runtime/launch/unique_fd.h"

namespace zt::launch {

// How a rank's final error line starts (as main prints it).
inline constexpr std::string_view kErrorLinePrefix = "zerotrain: error: ";

class LineRelay {
 public:
  // Writes to out_fd; keeps the last tail_lines lines (0: none) for a failure report.
  // hold_errors: lines starting with kErrorLinePrefix are kept in held_errors() instead of
  // being written (nor do they enter the tail), and so are the indented lines right after
  // one: its continuation (an out-of-memory error's table), joined to it with '\n'.
  LineRelay(std::string prefix, int out_fd, std::size_t tail_lines, bool hold_errors = false);

  // Writes each complete line in bytes, prefixed; holds back a trailing partial line.
  void feed(std::string_view bytes);
  // End of the stream: a held-back partial line is written with a newline added.
  void finish();

  const std::deque<std::string>& tail() const { return tail_; }
  const std::vector<std::string>& held_errors() const { return held_errors_; }

 private:
  void append_line(std::string_view line, std::string& out);
  void write_all(const std::string& out);

  std::string prefix_;
  int out_fd_;
  std::size_t tail_lines_;
  bool hold_errors_;
  std::string partial_;
  std::deque<std::string> tail_;
  std::vector<std::string> held_errors_;
  bool continues_error_ = false;  // the last line was held: an indented line continues it
  bool out_broken_ = false;       // the launcher's own stream is gone; keep draining, drop output
};

class OutputRelay {
 public:
  OutputRelay(int stdout_fd, int stderr_fd, std::size_t stderr_tail_lines);

  // Relays a rank's stdout to stdout_fd and its stderr to stderr_fd.
  void add_rank(int rank, UniqueFd child_stdout, UniqueFd child_stderr);

  // One POLLIN entry per pipe still open.
  void append_pollfds(std::vector<pollfd>& fds) const;
  // Reads once from each of our pipes that fds marks ready; a pipe at EOF is finished
  // (its partial line flushed) and closed.
  void on_ready(const std::vector<pollfd>& fds);
  bool all_closed() const;
  // Finishes and closes every pipe still open, e.g. one a stray grandchild holds.
  void close_all();

  // The last lines rank wrote to stderr, oldest first, its error lines left out.
  std::vector<std::string> stderr_tail(int rank) const;
  // The error lines the ranks held back, merged (merge_reported_errors): each once with
  // the ranks that wrote it, ordered by the first rank that did.
  std::vector<ReportedError> reported_errors() const;
  // Writes each reported error once to the launcher's stderr, "[all 4 ranks] line".
  void write_reported_errors(int world_size) const;

 private:
  struct Stream {
    int rank;
    bool is_stderr;
    UniqueFd fd;
    LineRelay relay;
  };

  // One read; true when it brought bytes.
  bool read_from(Stream& stream);

  int stdout_fd_;
  int stderr_fd_;
  std::size_t stderr_tail_lines_;
  std::vector<Stream> streams_;
};

}  // namespace zt::launch
