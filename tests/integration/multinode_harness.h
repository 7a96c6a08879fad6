// Multi-node jobs in tests: each "node" is a place to run commands (this machine, or a
// network namespace through `ip netns exec`) with its own address. The scenarios below
// run one `zerotrain launch` per node and check what a user of several nodes relies on;
// the loopback and network-namespace suites run the same scenarios.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/command_harness.h"

namespace zt::launch::testing {

struct Node {
  std::vector<std::string> exec_prefix;  // {} or {"ip", "netns", "exec", NAME}
  std::string address;                   // this node's address as the others reach it

  std::vector<std::string> command(std::vector<std::string> argv) const {
    std::vector<std::string> full = exec_prefix;
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
  }
};

inline const std::string kJobToken = "multinode-test-token-0123456789";

// The job every scenario trains: tiny, few steps, one BLAS thread per rank (so that a
// node with one rank computes exactly as a node with two), and a given comm timeout.
inline std::vector<std::string> job_args(const std::string& run_dir, int comm_timeout_s) {
  return {tiny_config(),
          "--set",
          "run.dir=" + run_dir,
          "--set",
          "train.steps=12",
          "--set",
          "run.log_every=4",
          "--set",
          "runtime.blas_threads=1",
          "--set",
          "runtime.comm_timeout_s=" + std::to_string(comm_timeout_s)};
}

// `zerotrain launch` for node `node_rank` of a 2-node job, one rank per node.
inline std::vector<std::string> node_launch(const Node& node, int node_rank,
                                            const std::string& master_addr, int port,
                                            const std::string& run_dir, int comm_timeout_s = 30,
                                            const std::string& status_interval = "5") {
  std::vector<std::string> argv = {zerotrain_exe(),     "launch",
                                   "--nnodes",          "2",
                                   "--node-rank",       std::to_string(node_rank),
                                   "--nproc-per-node",  "1",
                                   "--master-addr",     master_addr,
                                   "--master-port",     std::to_string(port),
                                   "--status-interval", status_interval};
  for (std::string& arg : job_args(run_dir, comm_timeout_s)) argv.push_back(std::move(arg));
  return node.command(std::move(argv));
}

inline const EnvChanges kJobEnv = {{"ZEROTRAIN_STORE_TOKEN", kJobToken}};

// The losses of the same job as one node with two ranks, on this machine.
inline std::vector<std::string> reference_losses(const TempDir& dir) {
  std::vector<std::string> argv = {zerotrain_exe(), "launch", "--nproc-per-node", "2"};
  for (std::string& arg : job_args(dir / "reference", 30)) argv.push_back(std::move(arg));
  const CommandResult result = run_command(argv, dir, {}, 120s);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return losses_of(dir / "reference/metrics.jsonl");
}

// Two launchers, one per node, train to the very losses of one node with two ranks.
inline void expect_same_losses_as_one_node(const Node& node0, const Node& node1, int port) {
  TempDir dir;
  const std::vector<std::string> expected = reference_losses(dir);
  ASSERT_EQ(expected.size(), 12u);
  CommandProcess first(node_launch(node0, 0, node0.address, port, dir / "node0"), dir, "node0",
                       kJobEnv);
  CommandProcess second(node_launch(node1, 1, node0.address, port, dir / "node1"), dir, "node1",
                        kJobEnv);
  const CommandResult r0 = first.wait(120s);
  const CommandResult r1 = second.wait(120s);
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(r0.out.find("[rank 0] zerotrain: gpt, "), std::string::npos) << r0.out;
  EXPECT_NE(r0.out.find("2 ranks"), std::string::npos) << r0.out;
  EXPECT_EQ(losses_of(dir / "node0/metrics.jsonl"), expected);
}

// Only node 0 comes: its launcher says what it awaits every status interval, then names
// the missing rank when the rendezvous timeout (runtime.comm_timeout_s) runs out.
inline void expect_missing_node_reported(const Node& node0, int port) {
  TempDir dir;
  constexpr int kTimeoutS = 4;
  const auto start = Clock::now();
  CommandProcess alone(node_launch(node0, 0, node0.address, port, dir / "node0", kTimeoutS, "1"),
                       dir, "node0", kJobEnv);
  const std::string verdict =
      "zerotrain launch: rank 1 (node 1) did not join the rendezvous within 4 s "
      "(runtime.comm_timeout_s)";
  // Reported at the timeout (plus what a loaded machine needs to start a launcher).
  ASSERT_TRUE(alone.wait_for_stderr(verdict, std::chrono::seconds(kTimeoutS + 6)))
      << alone.err_so_far();
  const double reported_after = seconds(Clock::now() - start);
  EXPECT_GE(reported_after, kTimeoutS - 0.5);
  const CommandResult result = alone.wait(60s);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("zerotrain launch: 1 s of 4 s: waiting for rank 1 (node 1) to join "
                            "the rendezvous; ranks here wait for store key 'gloo/world/control/1'"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("zerotrain launch: 3 s of 4 s: waiting for rank 1 (node 1)"),
            std::string::npos)
      << result.err;
}

// Only node 1 comes: its rank says every status interval (5 s) why it cannot reach node
// 0's store (refused: nothing listens there), then gives up at runtime.comm_timeout_s.
inline void expect_absent_store_reported(const Node& node1, const std::string& master_addr,
                                         int port) {
  TempDir dir;
  constexpr int kTimeoutS = 6;
  CommandProcess alone(node_launch(node1, 1, master_addr, port, dir / "node1", kTimeoutS), dir,
                       "node1", kJobEnv);
  const CommandResult result = alone.wait(60s);
  const std::string address = master_addr + ":" + std::to_string(port);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(
      result.err.find("[rank 1] zerotrain: store " + address +
                      ": still connecting after 5 s of 6 s: connection refused by " + address),
      std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("could not connect within 6000 ms (is the launcher running?); last "
                            "error: connection refused by " +
                            address),
            std::string::npos)
      << result.err;
  EXPECT_LT(seconds(result.elapsed), kTimeoutS + 15.0) << result.err;  // start-up under load
}

// Starts node 0 alone and returns once its store listens (its launcher said so).
inline void wait_until_listening(const CommandProcess& node0) {
  ASSERT_TRUE(node0.wait_for_stderr("zerotrain launch: store listening on port", 30s))
      << node0.err_so_far();
}

// A stranger's two attempts on the store at master_addr:port from `from`: a `zerotrain
// train` with the wrong token (refused at once), and bytes that are not the protocol.
inline void attack_store(const Node& from, const std::string& master_addr, int port,
                         const TempDir& dir) {
  const CommandResult wrong_token = run_command(
      from.command({zerotrain_exe(), "train", tiny_config(), "--set", "run.dir=" + (dir / "x")}),
      dir,
      {{"RANK", "1"},
       {"LOCAL_RANK", "0"},
       {"WORLD_SIZE", "2"},
       {"LOCAL_WORLD_SIZE", "1"},
       {"MASTER_ADDR", master_addr},
       {"MASTER_PORT", std::to_string(port)},
       {"ZEROTRAIN_STORE_TOKEN", "not-the-token"}},
      60s);
  EXPECT_EQ(wrong_token.exit_code, 1) << wrong_token.err;
  EXPECT_NE(wrong_token.err.find("the store server refused this client: wrong token"),
            std::string::npos)
      << wrong_token.err;
  const CommandResult garbage = run_command(
      from.command({"bash", "-c",
                    "exec 3<>/dev/tcp/" + master_addr + "/" + std::to_string(port) +
                        " && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && { cat <&3 >/dev/null 2>&1; "
                        "echo hung up; }"}),
      dir, {}, 30s);
  // Connected and sent; then cat ended, by EOF or a reset: the server hung up on it.
  EXPECT_EQ(garbage.exit_code, 0) << garbage.err;
  EXPECT_EQ(garbage.out, "hung up\n") << garbage.err;
}

// A wrong-token client and a garbage-sending one, both from `stranger`, are refused and
// logged by node 0's launcher naming their address; the job then trains undisturbed.
inline void expect_strangers_refused(const Node& node0, const Node& node1, const Node& stranger,
                                     int port) {
  TempDir dir;
  const std::vector<std::string> expected = reference_losses(dir);
  CommandProcess first(node_launch(node0, 0, node0.address, port, dir / "node0"), dir, "node0",
                       kJobEnv);
  wait_until_listening(first);
  attack_store(stranger, node0.address, port, dir);
  CommandProcess second(node_launch(node1, 1, node0.address, port, dir / "node1"), dir, "node1",
                        kJobEnv);
  const CommandResult r0 = first.wait(120s);
  const CommandResult r1 = second.wait(120s);
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(
      r0.err.find("zerotrain: store server: refused connection from " + stranger.address + ":"),
      std::string::npos)
      << r0.err;
  EXPECT_NE(r0.err.find("wrong token"), std::string::npos) << r0.err;
  EXPECT_NE(
      r0.err.find("zerotrain: store server: dropped connection from " + stranger.address + ":"),
      std::string::npos)
      << r0.err;
  EXPECT_EQ(losses_of(dir / "node0/metrics.jsonl"), expected);
}

// Whether a TCP connection from `from` to address:port succeeds.
inline bool can_connect(const Node& from, const std::string& address, int port,
                        const TempDir& dir) {
  const CommandResult result = run_command(
      from.command({"bash", "-c", "exec 3<>/dev/tcp/" + address + "/" + std::to_string(port)}), dir,
      {}, 30s);
  return result.exit_code == 0;
}

}  // namespace zt::launch::testing

namespace zt::launch::testing {

// The local addresses `ss -ltn` shows listening on `port` where `node` runs.
inline std::vector<std::string> listening_addresses(const Node& node, int port,
                                                    const TempDir& dir) {
  const CommandResult result = run_command(node.command({"ss", "-ltnH"}), dir, {}, 30s);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> addresses;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string state, recv_q, send_q, local;
    fields >> state >> recv_q >> send_q >> local;
    const std::size_t colon = local.rfind(':');
    if (colon != std::string::npos && local.substr(colon + 1) == std::to_string(port)) {
      addresses.push_back(local.substr(0, colon));
    }
  }
  return addresses;
}

// Node 0's store listens on its --master-addr and nowhere else: `ss` shows that one
// address, and a connection to another address of node 0's machine is refused.
inline void expect_store_listens_only_on(const Node& node0, const std::string& other_address,
                                         int port) {
  TempDir dir;
  CommandProcess first(node_launch(node0, 0, node0.address, port, dir / "node0"), dir, "node0",
                       kJobEnv);
  wait_until_listening(first);
  EXPECT_EQ(listening_addresses(node0, port, dir), std::vector<std::string>{node0.address});
  EXPECT_TRUE(can_connect(node0, node0.address, port, dir));
  EXPECT_FALSE(can_connect(node0, other_address, port, dir))
      << "the store accepts connections on " << other_address << " too";
}

}  // namespace zt::launch::testing
