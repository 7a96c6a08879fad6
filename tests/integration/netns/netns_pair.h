// NetnsPair: two network namespaces joined by a veth pair, 10.77.0.1/24 in the first and
// 10.77.0.2/24 in the second, each with its loopback up: two "machines" for multi-node
// tests. Names carry the test process's pid, so parallel tests do not meet; the
// destructor kills what runs inside (by `ip netns pids`) and deletes both namespaces.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/multinode_harness.h"

namespace zt::launch::testing {

class NetnsPair {
 public:
  // `tag` tells apart the pairs of one test process (one letter or digit).
  explicit NetnsPair(char tag) {
    const std::string base = "zt" + std::to_string(::getpid()) + tag;
    names_ = {base + "a", base + "b"};
    const std::string veth_a = base + "va";  // interface names: 15 characters at most
    const std::string veth_b = base + "vb";
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "netns", "add", names_[0]},
        {"ip", "netns", "add", names_[1]},
        {"ip", "link", "add", veth_a, "type", "veth", "peer", "name", veth_b},
        {"ip", "link", "set", veth_a, "netns", names_[0]},
        {"ip", "link", "set", veth_b, "netns", names_[1]},
        {"ip", "-n", names_[0], "addr", "add", "10.77.0.1/24", "dev", veth_a},
        {"ip", "-n", names_[1], "addr", "add", "10.77.0.2/24", "dev", veth_b},
        {"ip", "-n", names_[0], "link", "set", veth_a, "up"},
        {"ip", "-n", names_[1], "link", "set", veth_b, "up"},
        {"ip", "-n", names_[0], "link", "set", "lo", "up"},
        {"ip", "-n", names_[1], "link", "set", "lo", "up"},
    };
    for (const auto& step : steps) {
      const CommandResult result = run_command(step, dir_, {}, 30s);
      if (result.exit_code != 0) {
        error_ = "`" + join(step) + "` failed (exit " + std::to_string(result.exit_code) +
                 "): " + result.err +
                 "these tests need root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's `ip`";
        return;
      }
      if (step[1] == "netns") ++created_;
    }
  }

  ~NetnsPair() {
    for (int i = static_cast<int>(created_) - 1; i >= 0; --i) {
      const std::string& name = names_[static_cast<std::size_t>(i)];
      kill_everything_in(name);
      run_command({"ip", "netns", "del", name}, dir_, {}, 30s);
    }
  }

  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  // Empty when both namespaces are ready; else why not.
  const std::string& error() const { return error_; }

  Node node(int k) const {
    return Node{{"ip", "netns", "exec", names_[static_cast<std::size_t>(k)]},
                k == 0 ? "10.77.0.1" : "10.77.0.2"};
  }

 private:
  static std::string join(const std::vector<std::string>& argv) {
    std::string text;
    for (const auto& arg : argv) text += (text.empty() ? "" : " ") + arg;
    return text;
  }

  // SIGKILL to every process in the namespace, a bounded number of rounds (a launcher
  // being killed may have just spawned a rank).
  void kill_everything_in(const std::string& name) {
    for (int round = 0; round < 20; ++round) {
      const CommandResult pids = run_command({"ip", "netns", "pids", name}, dir_, {}, 30s);
      std::istringstream in(pids.out);
      bool any = false;
      for (long pid = 0; in >> pid;) {
        if (pid > 1 && pid != ::getpid()) {
          ::kill(static_cast<pid_t>(pid), SIGKILL);
          any = true;
        }
      }
      if (!any) return;
      std::this_thread::sleep_for(50ms);  // let the kills land before looking again
    }
  }

  TempDir dir_;
  std::vector<std::string> names_;
  std::size_t created_ = 0;
  std::string error_;
};

}  // namespace zt::launch::testing
