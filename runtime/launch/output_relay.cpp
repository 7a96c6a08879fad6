// LineRelay and OutputRelay: line splitting, prefixing and tails of the ranks' output,
// and reading their pipes without blocking.
#include "runtime/launch/output_relay.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

namespace zt::launch {
namespace {

// A "line" longer than this is written out in pieces, each prefixed, so a child that
// never writes a newline cannot make the launcher buffer without bound.
constexpr std::size_t kMaxLineBytes = std::size_t{64} * 1024;
constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;

}  // namespace

LineRelay::LineRelay(std::string prefix, int out_fd, std::size_t tail_lines, bool hold_errors)
    : prefix_(std::move(prefix)),
      out_fd_(out_fd),
      tail_lines_(tail_lines),
      hold_errors_(hold_errors) {}

void LineRelay::feed(std::string_view bytes) {
  std::string out;
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(bytes);
      break;
    }
    partial_.append(bytes.substr(0, newline));
    append_line(partial_, out);
    partial_.clear();
    bytes.remove_prefix(newline + 1);
  }
  while (partial_.size() >= kMaxLineBytes) {
    append_line(std::string_view(partial_).substr(0, kMaxLineBytes), out);
    partial_.erase(0, kMaxLineBytes);
  }
  // One write per chunk read keeps a line whole even when ranks share a terminal.
  write_all(out);
}

void LineRelay::finish() {
  if (partial_.empty()) return;
  std::string out;
  append_line(partial_, out);
  partial_.clear();
  write_all(out);
}

void LineRelay::append_line(std::string_view line, std::string& out) {
  if (hold_errors_ && line.substr(0, kErrorLinePrefix.size()) == kErrorLinePrefix) {
    held_errors_.emplace_back(line);
    continues_error_ = true;
    return;
  }
  if (continues_error_ && !line.empty() && (line.front() == ' ' || line.front() == '\t')) {
    held_errors_.back().append("\n").append(line);
    return;
  }
  continues_error_ = false;
  out.append(prefix_).append(line).push_back('\n');
  if (tail_lines_ == 0) return;
  tail_.emplace_back(line);
  if (tail_.size() > tail_lines_) tail_.pop_front();
}

void LineRelay::write_all(const std::string& out) {
  std::size_t done = 0;
  while (!out_broken_ && done < out.size()) {
    const ssize_t n = ::write(out_fd_, out.data() + done, out.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // EPIPE and the like: nobody reads the launcher's output any more. Stopping the run
      // for that would be worse than losing its output, so drop it.
      out_broken_ = true;
    }
  }
}

OutputRelay::OutputRelay(int stdout_fd, int stderr_fd, std::size_t stderr_tail_lines)
    : stdout_fd_(stdout_fd), stderr_fd_(stderr_fd), stderr_tail_lines_(stderr_tail_lines) {}

void OutputRelay::add_rank(int rank, UniqueFd child_stdout, UniqueFd child_stderr) {
  const std::string prefix = "[rank " + std::to_string(rank) + "] ";
  streams_.push_back(
      Stream{rank, false, std::move(child_stdout), LineRelay(prefix, stdout_fd_, 0)});
  streams_.push_back(Stream{rank, true, std::move(child_stderr),
                            LineRelay(prefix, stderr_fd_, stderr_tail_lines_, true)});
}

void OutputRelay::append_pollfds(std::vector<pollfd>& fds) const {
  for (const Stream& stream : streams_) {
    if (stream.fd.valid()) fds.push_back(pollfd{stream.fd.get(), POLLIN, 0});
  }
}

void OutputRelay::on_ready(const std::vector<pollfd>& fds) {
  for (const pollfd& ready : fds) {
    if ((ready.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    for (Stream& stream : streams_) {
      if (stream.fd.valid() && stream.fd.get() == ready.fd) read_from(stream);
    }
  }
}

bool OutputRelay::read_from(Stream& stream) {
  char buffer[kReadChunkBytes];
  const ssize_t n = ::read(stream.fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    stream.relay.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    return true;
  }
  if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    stream.relay.finish();
    stream.fd.reset();
  }
  return false;
}

bool OutputRelay::all_closed() const {
  for (const Stream& stream : streams_) {
    if (stream.fd.valid()) return false;
  }
  return true;
}

void OutputRelay::close_all() {
  for (Stream& stream : streams_) {
    // What is already in the pipe is still relayed; a bounded number of reads, as a
    // stray writer could keep it full forever.
    for (int reads = 0; reads < 16 && stream.fd.valid(); ++reads) {
      if (!read_from(stream)) break;
    }
    if (!stream.fd.valid()) continue;
    stream.relay.finish();
    stream.fd.reset();
  }
}

std::vector<std::string> OutputRelay::stderr_tail(int rank) const {
  for (const Stream& stream : streams_) {
    if (stream.rank == rank && stream.is_stderr) {
      return {stream.relay.tail().begin(), stream.relay.tail().end()};
    }
  }
  return {};
}

std::vector<ReportedError> OutputRelay::reported_errors() const {
  std::vector<RankErrors> by_rank;
  for (const Stream& stream : streams_) {
    if (stream.is_stderr) by_rank.push_back(RankErrors{stream.rank, stream.relay.held_errors()});
  }
  return merge_reported_errors(std::move(by_rank));
}

void OutputRelay::write_reported_errors(int world_size) const {
  for (const ReportedError& error : reported_errors()) {
    std::fprintf(stderr, "[%s] %s\n", describe_ranks(error.ranks, world_size).c_str(),
                 error.message.c_str());
  }
  std::fflush(stderr);
}

}  // namespace zt::launch
