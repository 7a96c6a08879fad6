// RendezvousWatch: node 0's launcher watching its store while the ranks of every node
// gather. Every status interval it says which ranks have not joined and which store keys
// the others wait for; after the rendezvous timeout it names the missing ranks, so a node
// that never starts is reported by number instead of by silence.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace zt::comm {
class TcpStoreServer;
}  // namespace zt::comm

namespace zt::launch {

class RendezvousWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // The ranks (0..world_size-1, nproc_per_node per node) join the communicator group
  // `group_name`; `server` must outlive the watch. Times count from construction.
  RendezvousWatch(const comm::TcpStoreServer& server, int world_size, int nproc_per_node,
                  std::chrono::milliseconds status_interval, std::chrono::milliseconds timeout,
                  std::string group_name = "world");

  enum class State { kWaiting, kComplete, kTimedOut };

  // Looks at the store when a status line or the timeout is due (otherwise does nothing)
  // and writes what is awaited to stderr. kTimedOut is returned once, when ranks are still
  // missing at the timeout; kComplete once every rank has joined.
  State check(Clock::time_point now);
  // When check() next has something to do; nullopt once the watch is over.
  std::optional<Clock::time_point> next_check() const;

  // Looks at the store now, out of turn; false when it did not answer.
  bool look();
  // "rank 3 (node 1)", "ranks 2, 3 (node 1)", from the last look; empty when none is missing.
  std::string missing_ranks() const;
  // The launcher's timeout line: which ranks did not join, and what to check.
  std::string timeout_message() const;

 private:
  std::optional<std::vector<std::string>> look_at_store();
  std::string awaited_keys_phrase(const std::vector<std::string>& keys) const;

  const comm::TcpStoreServer& server_;
  const int world_size_;
  const int nproc_per_node_;
  const std::chrono::milliseconds status_interval_;
  const std::chrono::milliseconds timeout_;
  const std::string key_prefix_;
  const Clock::time_point start_;
  Clock::time_point next_status_;
  std::vector<int> missing_;  // from the last look at the store; all ranks before it
  bool over_ = false;
};

}  // namespace zt::launch
