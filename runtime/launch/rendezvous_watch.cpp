// RendezvousWatch: one look at node 0's store per status interval, turned into a line
// naming the missing ranks, their nodes and the keys the arrived ranks wait for.
#include "runtime/launch/rendezvous_watch.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "comm/rendezvous_keys.h"
#include "comm/store/store_values.h"
#include "comm/store/tcp_store_server.h"

namespace zt::launch {
namespace {

// "ranks 2, 3 (node 1)" or "ranks 2, 5 (nodes 1, 2)".
std::string ranks_with_nodes(const std::vector<int>& ranks, int nproc_per_node) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  std::vector<int> nodes;
  constexpr std::size_t kShown = 16;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i < kShown) text += (i ? ", " : "") + std::to_string(ranks[i]);
    const int node = ranks[i] / nproc_per_node;
    if (nodes.empty() || nodes.back() != node) nodes.push_back(node);
  }
  if (ranks.size() > kShown) text += " and " + std::to_string(ranks.size() - kShown) + " more";
  text += nodes.size() == 1 ? " (node " : " (nodes ";
  for (std::size_t i = 0; i < nodes.size() && i < kShown; ++i) {
    text += (i ? ", " : "") + std::to_string(nodes[i]);
  }
  if (nodes.size() > kShown) text += ", ...";
  return text + ")";
}

// "2.5 s", "300 s".
std::string seconds_text(std::chrono::milliseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(t.count()) / 1000.0);
  return text;
}

void print_line(const std::string& line) {
  std::fprintf(stderr, "zerotrain launch: %s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace

RendezvousWatch::RendezvousWatch(const comm::TcpStoreServer& server, int world_size,
                                 int nproc_per_node, std::chrono::milliseconds status_interval,
                                 std::chrono::milliseconds timeout, std::string group_name)
    : server_(server),
      world_size_(world_size),
      nproc_per_node_(std::max(1, nproc_per_node)),
      status_interval_(std::max(status_interval, std::chrono::milliseconds(1))),
      timeout_(timeout),
      key_prefix_(comm::rendezvous_key_prefix(group_name)),
      start_(Clock::now()),
      next_status_(start_ + status_interval_) {
  for (int rank = 0; rank < world_size_; ++rank) missing_.push_back(rank);
}

std::optional<RendezvousWatch::Clock::time_point> RendezvousWatch::next_check() const {
  if (over_) return std::nullopt;
  return std::min(next_status_, start_ + timeout_);
}

RendezvousWatch::State RendezvousWatch::check(Clock::time_point now) {
  if (over_ || now < *next_check()) return State::kWaiting;
  const bool timed_out = now >= start_ + timeout_;
  // The mark passed, not the clock: "3 s" reads the same however late the loop woke.
  const std::string mark = seconds_text(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::min(next_status_, now) - start_));
  while (next_status_ <= now) next_status_ += status_interval_;

  const std::optional<std::vector<std::string>> awaited = look_at_store();
  if (!awaited) {
    print_line(mark + ": the store did not answer within 1 s");
    if (!timed_out) return State::kWaiting;
    over_ = true;
    return State::kTimedOut;
  }
  if (missing_.empty()) {
    over_ = true;
    return State::kComplete;
  }
  if (timed_out) {
    over_ = true;
    return State::kTimedOut;
  }
  print_line(mark + " of " + seconds_text(timeout_) + ": waiting for " + missing_ranks() +
             " to join the rendezvous" + awaited_keys_phrase(*awaited));
  return State::kWaiting;
}

bool RendezvousWatch::look() { return look_at_store().has_value(); }

// Updates missing_ from the store; returns the keys parked requests wait for.
std::optional<std::vector<std::string>> RendezvousWatch::look_at_store() {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(world_size_));
  for (int rank = 0; rank < world_size_; ++rank)
    keys.push_back(comm::joined_key(key_prefix_, rank));
  std::optional<comm::StoreServerStatus> status = server_.status(keys);
  if (!status) return std::nullopt;
  missing_.clear();
  for (const std::string& key : status->missing) {
    if (const std::optional<int> rank = comm::rank_of_key(key_prefix_, key)) {
      missing_.push_back(*rank);
    }
  }
  return std::move(status->awaited_keys);
}

std::string RendezvousWatch::missing_ranks() const {
  return missing_.empty() ? std::string() : ranks_with_nodes(missing_, nproc_per_node_);
}

std::string RendezvousWatch::timeout_message() const {
  return missing_ranks() + " did not join the rendezvous within " + seconds_text(timeout_) +
         " (runtime.comm_timeout_s); is their node's `zerotrain launch` running, with this "
         "node's --master-addr, --master-port and ZEROTRAIN_STORE_TOKEN?";
}

std::string RendezvousWatch::awaited_keys_phrase(const std::vector<std::string>& keys) const {
  std::vector<std::string> ours;
  for (const std::string& key : keys) {
    if (key.rfind(key_prefix_, 0) == 0) ours.push_back(key);
  }
  if (ours.empty()) return "";
  return "; ranks here wait for store key" + std::string(ours.size() == 1 ? " " : "s ") +
         comm::join_keys(ours);
}

}  // namespace zt::launch
