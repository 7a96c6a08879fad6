// run_launcher: validating the options, hosting or joining the store, building each
// rank's environment and spawning the ranks; supervision is RankSupervisor's.
#include "runtime/launch/launcher.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/comm_lanes.h"
#include "comm/store/store_token.h"
#include "comm/store/tcp_store_server.h"
#include "core/error.h"
#include "runtime/launch/rank_env.h"
#include "runtime/launch/rank_supervisor.h"
#include "runtime/launch/rendezvous_watch.h"

extern char** environ;

namespace zt::launch {
namespace {

// 0.0.0.0 or ::, which names no machine another node could connect to.
bool is_unspecified_address(const std::string& text) {
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return v4.s_addr == htonl(INADDR_ANY);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_UNSPECIFIED(&v6);
  return false;
}

void validate(const LaunchOptions& o) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };
  require(o.nproc_per_node >= 1,
          "--nproc-per-node: expected an integer >= 1, got " + std::to_string(o.nproc_per_node));
  require(o.nnodes >= 1, "--nnodes: expected an integer >= 1, got " + std::to_string(o.nnodes));
  require(o.nproc_per_node <= INT_MAX / o.nnodes,
          "--nnodes * --nproc-per-node does not fit in an int");
  require(o.node_rank >= 0 && o.node_rank < o.nnodes,
          "--node-rank: expected 0.." + std::to_string(o.nnodes - 1) + " for --nnodes " +
              std::to_string(o.nnodes) + ", got " + std::to_string(o.node_rank));
  require(o.master_port >= 0 && o.master_port <= 65535,
          "--master-port: expected 0..65535, got " + std::to_string(o.master_port));
  require(o.node_rank == 0 || o.master_port != 0, "--master-port is required with --node-rank " +
                                                      std::to_string(o.node_rank) +
                                                      ": pass the store port of node 0's launcher");
  require(!o.master_addr.empty(), "--master-addr must not be empty");
  require(o.nnodes == 1 || !is_unspecified_address(o.master_addr),
          "--master-addr " + o.master_addr + ": with --nnodes " + std::to_string(o.nnodes) +
              " give node 0's address as the other nodes reach it (the store listens on "
              "exactly that address)");
  require(!o.rank_command.empty(), "no command to run for the ranks");
  require(o.grace_period.count() >= 0, "the grace period must not be negative");
  require(o.stderr_tail_lines >= 0, "stderr_tail_lines must not be negative");
  require(o.rendezvous_timeout.count() > 0, "the rendezvous timeout must be positive");
  require(o.status_interval.count() > 0, "--status-interval must be positive");
  require(o.max_restarts >= 0, "--max-restarts must not be negative");
  require(o.max_restarts == 0 || o.nnodes == 1,
          "--max-restarts works on one node (--nnodes 1): restarting a multi-node job needs "
          "every node's launcher to restart together, which this launcher does not "
          "coordinate; restart the job from its scheduler (Slurm --requeue) with "
          "checkpoint.resume = \"latest\" instead");
}

// The store the ranks rendezvous on: served here on node 0, node 0's elsewhere.
struct StoreEndpoint {
  std::unique_ptr<comm::TcpStoreServer> server;  // null on nodes other than 0
  int port = 0;
  std::string token;
};

std::unique_ptr<comm::TcpStoreServer> listen_for_ranks(const LaunchOptions& o,
                                                       const std::string& token) {
  // Only where the ranks connect, the address every node was given: loopback by default,
  // unreachable from outside; with several nodes, node 0's address on the network they
  // share, and no other interface of this machine.
  try {
    return std::make_unique<comm::TcpStoreServer>(o.master_addr,
                                                  static_cast<std::uint16_t>(o.master_port), token);
  } catch (const CommError& e) {
    if (o.master_port != 0 && std::string_view(e.what()).find("in use") != std::string_view::npos) {
      throw CommError(std::string(e.what()) + " (--master-port " + std::to_string(o.master_port) +
                      "); pass another port, or 0 to pick a free one");
    }
    throw CommError(std::string(e.what()) + " (--master-addr " + o.master_addr +
                    " must be an address of this machine, node 0)");
  }
}

// The other nodes need this node's port (picked here when --master-port is 0) and its
// token: the same exported ZEROTRAIN_STORE_TOKEN, or the one generated here.
void print_how_to_join(const LaunchOptions& o, const StoreEndpoint& store, bool generated) {
  const std::string token_prefix =
      generated ? std::string(comm::kStoreTokenEnvVar) + "=" + store.token + " " : "";
  std::fprintf(stderr,
               "zerotrain launch: store listening on port %d; start node K of 1..%d with\n"
               "  %szerotrain launch --nnodes %d --node-rank K --nproc-per-node %d "
               "--master-addr %s --master-port %d CONFIG ...\n%s",
               store.port, o.nnodes - 1, token_prefix.c_str(), o.nnodes, o.nproc_per_node,
               o.master_addr.c_str(), store.port,
               generated ? "" : "  with the same ZEROTRAIN_STORE_TOKEN exported there.\n");
}

StoreEndpoint prepare_store(const LaunchOptions& o) {
  std::string token = comm::store_token_from_env();
  if (o.node_rank > 0) {
    if (token.empty()) {
      throw UsageError(std::string(comm::kStoreTokenEnvVar) +
                       " is not set: nodes other than node 0 need the store token of node "
                       "0's launcher (export the same value on every node)");
    }
    return StoreEndpoint{nullptr, o.master_port, std::move(token)};
  }
  const bool generated = token.empty();
  if (generated) token = comm::generate_store_token();
  StoreEndpoint store{listen_for_ranks(o, token), 0, token};
  store.port = store.server->port();
  if (o.nnodes > 1) print_how_to_join(o, store, generated);
  return store;
}

// The launcher's environment with torchrun's variables (and the store token) set for
// one rank; inherited values of those names are replaced.
std::vector<std::string> rank_environment(const LaunchOptions& o, const StoreEndpoint& store,
                                          int local_rank, int attempt) {
  const std::pair<const char*, std::string> vars[] = {
      {"RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"NODE_RANK", std::to_string(o.node_rank)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(store.port)},
      {comm::kStoreTokenEnvVar, store.token},
      {kLauncherHostsStoreEnvVar, "1"},  // the ranks connect to our store, not their own
      {"ZEROTRAIN_RESTART_COUNT", std::to_string(attempt)},
  };
  auto ours = [&](std::string_view entry) {
    for (const auto& [name, value] : vars) {
      const std::string_view n(name);
      if (entry.size() > n.size() && entry.substr(0, n.size()) == n && entry[n.size()] == '=') {
        return true;
      }
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!ours(*entry)) env.emplace_back(*entry);
  }
  for (const auto& [name, value] : vars) env.push_back(std::string(name) + "=" + value);
  return env;
}

// One attempt: a fresh store (the last attempt's keys would confuse a new rendezvous), the
// ranks spawned and supervised to the end.
int run_attempt(const LaunchOptions& options, SignalPipe& signals,
                const std::vector<std::string>& command, int attempt, std::string& failure) {
  // Destruction runs bottom-up: ranks are killed and reaped (if still running, say after
  // an exception) before the store stops.
  const StoreEndpoint store = prepare_store(options);
  // This attempt's records are the ones written from now on (an earlier attempt's or run's
  // stay in run.dir/flight until a rank of this one writes over them).
  const std::filesystem::file_time_type attempt_start =
      std::filesystem::file_time_type::clock::now();
  OutputRelay relay(STDOUT_FILENO, STDERR_FILENO,
                    static_cast<std::size_t>(options.stderr_tail_lines));
  std::vector<SupervisedRank> ranks;
  ranks.reserve(static_cast<std::size_t>(options.nproc_per_node));
  for (int local_rank = 0; local_rank < options.nproc_per_node; ++local_rank) {
    ChildProcess process =
        ChildProcess::spawn(command, rank_environment(options, store, local_rank, attempt));
    const int rank = options.node_rank * options.nproc_per_node + local_rank;
    relay.add_rank(rank, process.take_stdout(), process.take_stderr());
    ranks.push_back(SupervisedRank{rank, std::move(process)});
  }
  std::optional<RendezvousWatch> watch;
  if (store.server && options.nnodes > 1) {
    watch.emplace(*store.server, options.nnodes * options.nproc_per_node, options.nproc_per_node,
                  options.status_interval, options.rendezvous_timeout,
                  comm::first_lane_group_name("world"));
  }
  FlightVerdict verdict;
  if (options.flight_verdict) {
    verdict = [&options, attempt_start] { return options.flight_verdict(attempt_start); };
  }
  RankSupervisor supervisor(std::move(ranks), relay, signals, options.grace_period,
                            options.status_interval, watch ? &*watch : nullptr, std::move(verdict));
  const int code = supervisor.run();
  failure = supervisor.failure_summary();
  return code;
}

}  // namespace

int run_launcher(const LaunchOptions& options) {
  validate(options);
  // Installed before any rank exists and kept across attempts, so no signal is missed.
  SignalPipe signals;
  std::vector<std::string> command = options.rank_command;
  for (int attempt = 0;; ++attempt) {
    std::string failure;
    const int code = run_attempt(options, signals, command, attempt, failure);
    // Exit 2 (usage, config) fails the same way every time; >= 128 is the launcher's signal.
    if (code != 1 || attempt >= options.max_restarts) return code;
    if (options.restart_command) command = options.restart_command(attempt + 1);
    std::fprintf(stderr, "zerotrain launch: restart %d of %d: %s; starting all %d rank%s again%s\n",
                 attempt + 1, options.max_restarts,
                 failure.empty() ? "the job failed" : failure.c_str(), options.nproc_per_node,
                 options.nproc_per_node == 1 ? "" : "s",
                 options.restart_command ? "" : " with the same command");
    std::fflush(stderr);
  }
}

}  // namespace zt::launch
