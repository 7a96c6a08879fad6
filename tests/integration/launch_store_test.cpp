// The launcher's store and its errors: ranks reach node 0's store with the token they
// were given; a busy port, inconsistent options and a missing command are clear errors.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "comm/store/tcp_store.h"
#include "runtime/launch/rank_env.h"
#include "tests/integration/launch_harness.h"

namespace zt::launch::testing {
namespace {

constexpr const char* kAsRankVar = "ZT_LAUNCH_TEST_AS_RANK";

// Not a test of its own: the rank that LaunchStore.RanksMeetOnTheLaunchersStore starts
// (this binary again). Each rank sets its key and waits for everyone else's.
TEST(LaunchStoreRank, MeetsTheOtherRanksOnTheStore) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read before this process starts any thread.
  if (std::getenv(kAsRankVar) == nullptr) GTEST_SKIP() << "runs only as a launched rank";
  const std::optional<RankEnv> env = read_rank_env();
  ASSERT_TRUE(env.has_value());
  comm::TcpStore store(env->master_addr, static_cast<std::uint16_t>(env->master_port),
                       env->store_token, std::chrono::seconds(20));
  store.set("rank/" + std::to_string(env->rank), "here");
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(env->world_size));
  for (int r = 0; r < env->world_size; ++r) keys.push_back("rank/" + std::to_string(r));
  store.wait(keys, std::chrono::seconds(20));
  std::printf("store ok: rank %d of %d (%s)\n", env->rank, env->world_size, env->source.c_str());
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  EXPECT_GT(n, 0);
  return std::string(path, n > 0 ? static_cast<std::size_t>(n) : 0);
}

TEST(LaunchStore, RanksMeetOnTheLaunchersStore) {
  TempDir dir;
  LaunchOptions options;
  options.nproc_per_node = 3;
  options.rank_command = {self_executable(),
                          "--gtest_filter=LaunchStoreRank.MeetsTheOtherRanksOnTheStore"};
  const LaunchResult result = launch(options, dir, {{kAsRankVar, "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  for (int r = 0; r < 3; ++r) {
    const std::string line = "[rank " + std::to_string(r) + "] store ok: rank " +
                             std::to_string(r) + " of 3 (torchrun)\n";
    EXPECT_NE(result.out.find(line), std::string::npos) << result.out;
  }
}

TEST(LaunchStore, NodeZeroOfSeveralPrintsHowToJoinWithItsPortAndToken) {
  TempDir dir;
  LaunchOptions options = sh_ranks(2, "echo port=$MASTER_PORT token=$ZEROTRAIN_STORE_TOKEN");
  options.nnodes = 2;
  options.master_addr = "127.0.0.1";  // several nodes of one machine, as tests run them
  const LaunchResult result = launch(options, dir, {{"ZEROTRAIN_STORE_TOKEN", std::nullopt}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::size_t at = result.out.find("[rank 0] port=");
  ASSERT_NE(at, std::string::npos) << result.out;
  std::istringstream line(result.out.substr(at + 14));
  std::string port;
  std::string token;
  std::getline(line, port, ' ');
  std::getline(line, token);
  ASSERT_EQ(token.rfind("token=", 0), 0u) << token;
  token.erase(0, 6);
  EXPECT_EQ(token.size(), 32u);
  const std::string hint = "  ZEROTRAIN_STORE_TOKEN=" + token +
                           " zerotrain launch --nnodes 2 --node-rank K --nproc-per-node 2 "
                           "--master-addr 127.0.0.1 --master-port " +
                           port + " CONFIG ...\n";
  EXPECT_NE(result.err.find(hint), std::string::npos) << result.err;
}

TEST(LaunchStore, AnExportedTokenIsTheOneTheRanksGet) {
  TempDir dir;
  const LaunchResult result = launch(sh_ranks(1, "echo token=$ZEROTRAIN_STORE_TOKEN"), dir,
                                     {{"ZEROTRAIN_STORE_TOKEN", "0123abcd"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 0] token=0123abcd\n"), std::string::npos) << result.out;
}

TEST(LaunchStore, BusyMasterPortIsAClearError) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length), 0);
  const int port = ntohs(addr.sin_port);

  TempDir dir;
  LaunchOptions options = sh_ranks(1, "echo should not run");
  options.master_port = port;
  const LaunchResult result = launch(options, dir);
  ::close(listener);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("zerotrain: error: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(std::to_string(port)), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("pass another port, or 0 to pick a free one"), std::string::npos)
      << result.err;
  EXPECT_EQ(result.out.find("should not run"), std::string::npos);
}

TEST(LaunchErrors, NonexistentCommandNamesTheCommand) {
  TempDir dir;
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.rank_command = {"/nonexistent/zt-no-such-rank", "train"};
  const LaunchResult result = launch(options, dir);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("zerotrain: error: cannot start `/nonexistent/zt-no-such-rank`: "
                            "No such file or directory"),
            std::string::npos)
      << result.err;
  EXPECT_THROW(run_launcher(options), IoError);
}

TEST(LaunchErrors, OtherNodesNeedThePortAndTheToken) {
  LaunchOptions options = sh_ranks(1, "true");
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "10.0.0.1";
  TempDir dir;
  LaunchResult result = launch(options, dir, {{"ZEROTRAIN_STORE_TOKEN", "abc"}});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--master-port is required with --node-rank 1"), std::string::npos)
      << result.err;

  options.master_port = 29500;
  result = launch(options, dir, {{"ZEROTRAIN_STORE_TOKEN", std::nullopt}});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("ZEROTRAIN_STORE_TOKEN is not set"), std::string::npos) << result.err;
}

TEST(LaunchErrors, InconsistentOptionsAreUsageErrors) {
  LaunchOptions options = sh_ranks(0, "true");
  EXPECT_THROW(run_launcher(options), UsageError);
  options = sh_ranks(1, "true");
  options.nnodes = 2;
  options.node_rank = 2;
  EXPECT_THROW(run_launcher(options), UsageError);
  options.node_rank = 0;  // the unspecified address names no node the others could reach
  options.master_addr = "0.0.0.0";
  EXPECT_THROW(run_launcher(options), UsageError);
  options.master_addr = "::";
  EXPECT_THROW(run_launcher(options), UsageError);
  options = sh_ranks(1, "true");
  options.master_port = 70000;
  EXPECT_THROW(run_launcher(options), UsageError);
  options.master_port = 0;
  options.rank_command.clear();
  EXPECT_THROW(run_launcher(options), UsageError);
}

}  // namespace
}  // namespace zt::launch::testing
