// run_launcher: `zerotrain launch` as a library. Hosts the store on node 0, spawns one
// process per local rank with torchrun's variables, relays and supervises them.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace zt::launch {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  // Node 0's address as the ranks (on every node) reach it; node 0's store listens on
  // exactly this address (a loopback one keeps a multi-node job on one machine).
  std::string master_addr = "127.0.0.1";
  // The store's port: 0 lets node 0 pick a free one; required on the other nodes.
  int master_port = 0;
  // argv of each rank, e.g. {"/path/zerotrain", "train", "cfg.toml", "--set", "a=b"}.
  std::vector<std::string> rank_command;
  // torchrun's --max-restarts: after a failed attempt, stop every rank and start them all
  // again, up to this many times (one node only). Each attempt's ranks get
  // ZEROTRAIN_RESTART_COUNT (0 for the first).
  int max_restarts = 0;
  // The ranks' argv for attempt `attempt` >= 1 (null: rank_command again): `zerotrain
  // launch CONFIG` resumes from the newest checkpoint here.
  std::function<std::vector<std::string>(int attempt)> restart_command;
  // How long ranks get between SIGTERM (or the forwarded signal) and SIGKILL.
  std::chrono::milliseconds grace_period{5000};
  // Lines of a failed rank's stderr repeated in the failure report.
  int stderr_tail_lines = 20;
  // Node 0 of several: how long every rank gets to join the rendezvous before the job is
  // stopped naming the missing ones (the ranks' runtime.comm_timeout_s).
  std::chrono::milliseconds rendezvous_timeout{300000};
  // How often to say what is awaited: ranks that have not joined (node 0 of several),
  // ranks that are stopped (every node).
  std::chrono::milliseconds status_interval{5000};
  // What the ranks' flight records last written at `since` or later show, one finding a line
  // (empty: none); null: the launcher prints no verdict. Called after a failed attempt, after
  // the launcher's own stop signal, and after SIGUSR1 to the launcher, which it forwards to
  // every rank (`zerotrain launch CONFIG` reads run.dir/flight as `zerotrain diagnose` does).
  std::function<std::vector<std::string>(std::filesystem::file_time_type since)> flight_verdict;
};

// Runs the ranks of this node to completion and returns the launcher's exit code: 0 when
// every rank exited 0; after a rank failed (the others are stopped, and a report naming
// the rank, how it ended, its last stderr lines and its error, shown once however many
// ranks reported it, goes to stderr) 2 when that rank exited 2 (a usage or config error),
// else 1; 1 when node 0's ranks did not all join within rendezvous_timeout; 128 + signo
// when the launcher got SIGINT, SIGTERM or SIGHUP (forwarded to the ranks, then as for a
// failure). No rank outlives the call. With max_restarts, a failure that exits 1 starts the
// job again (logging the restart and what failed) while restarts remain; a usage or config
// error (2) or the launcher's own signal ends it at once.
//
// Node 0 serves the rendezvous store; its token is ZEROTRAIN_STORE_TOKEN from the
// launcher's environment, or a fresh one. Multi-node runs need the same token on every
// node: export ZEROTRAIN_STORE_TOKEN everywhere, or let node 0 generate one (it prints
// how to start the other nodes with it). Other nodes run no store and need master_port
// and ZEROTRAIN_STORE_TOKEN.
//
// Throws UsageError for inconsistent options, CommError when the store cannot listen
// (port in use), IoError when a rank's command cannot be started.
int run_launcher(const LaunchOptions& options);

}  // namespace zt::launch
