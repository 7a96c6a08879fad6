// What each rank sees and what the launcher prints: torchrun's variables per rank, and
// every line of output prefixed with its rank on the stream it was written to.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "tests/integration/launch_harness.h"

namespace zt::launch::testing {
namespace {

const std::string kPrintEnv =
    "echo \"env RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE "
    "LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE GROUP_RANK=$GROUP_RANK NODE_RANK=$NODE_RANK "
    "MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT TOKEN=$ZEROTRAIN_STORE_TOKEN\"";

TEST(LaunchEnv, EveryRankGetsTorchrunsVariablesAndTheStorePort) {
  TempDir dir;
  // A RANK inherited by the launcher (say from an outer torchrun) must not leak through.
  const LaunchResult result = launch(sh_ranks(3, kPrintEnv), dir,
                                     {{"RANK", "99"}, {"ZEROTRAIN_STORE_TOKEN", std::nullopt}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::set<std::string> ports;
  std::set<std::string> tokens;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string r = std::to_string(rank);
    const std::string fixed = "[rank " + r + "] env RANK=" + r + " LOCAL_RANK=" + r +
                              " WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 GROUP_RANK=0 NODE_RANK=0 "
                              "MASTER_ADDR=127.0.0.1 MASTER_PORT=";
    const std::size_t at = result.out.find(fixed);
    ASSERT_NE(at, std::string::npos) << "rank " << r << ":\n" << result.out;
    // The rest of the line: "<port> TOKEN=<32 hex digits>".
    std::istringstream rest(result.out.substr(at + fixed.size()));
    std::string port;
    std::string token;
    std::getline(rest, port, ' ');
    std::getline(rest, token);
    EXPECT_FALSE(port.empty());
    EXPECT_EQ(port.find_first_not_of("0123456789"), std::string::npos) << port;
    EXPECT_EQ(token.size(), 38u) << token;
    EXPECT_EQ(token.rfind("TOKEN=", 0), 0u) << token;
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef", 6), std::string::npos) << token;
    ports.insert(port);
    tokens.insert(token);
  }
  ASSERT_EQ(ports.size(), 1u) << "ranks were told different ports";
  EXPECT_NE(*ports.begin(), "0") << "master_port 0 must become the store's real port";
  EXPECT_EQ(tokens.size(), 1u) << "ranks were given different tokens";
}

TEST(LaunchEnv, RanksOfASecondNodeAreOffsetByNodeRank) {
  TempDir dir;
  LaunchOptions options = sh_ranks(2, kPrintEnv);
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "10.1.2.3";
  options.master_port = 29555;
  const LaunchResult result = launch(options, dir, {{"ZEROTRAIN_STORE_TOKEN", "feedbeef"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int local = 0; local < 2; ++local) {
    const std::string r = std::to_string(2 + local);
    const std::string expected = "[rank " + r + "] env RANK=" + r +
                                 " LOCAL_RANK=" + std::to_string(local) +
                                 " WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=1 NODE_RANK=1 "
                                 "MASTER_ADDR=10.1.2.3 MASTER_PORT=29555 TOKEN=feedbeef\n";
    EXPECT_NE(result.out.find(expected), std::string::npos) << result.out;
  }
}

TEST(LaunchOutput, LinesArePrefixedByRankOnTheStreamTheyWereWrittenTo) {
  TempDir dir;
  const LaunchResult result = launch(
      sh_ranks(2, "echo out-$RANK; echo err-$RANK >&2; echo two words-$RANK; printf tail-$RANK"),
      dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const std::string r : {"0", "1"}) {
    EXPECT_NE(result.out.find("[rank " + r + "] out-" + r + "\n"), std::string::npos);
    EXPECT_NE(result.out.find("[rank " + r + "] two words-" + r + "\n"), std::string::npos);
    // A last line without its newline is still relayed, whole, at EOF.
    EXPECT_NE(result.out.find("[rank " + r + "] tail-" + r + "\n"), std::string::npos);
    EXPECT_NE(result.err.find("[rank " + r + "] err-" + r + "\n"), std::string::npos);
    EXPECT_EQ(result.out.find("err-" + r), std::string::npos) << "stderr relayed to stdout";
  }
  std::istringstream lines(result.out);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_TRUE(line.rfind("[rank 0] ", 0) == 0 || line.rfind("[rank 1] ", 0) == 0) << line;
  }
  EXPECT_EQ(count, 6);
}

TEST(LaunchOutput, ARankThatFinishesEarlyDoesNotStopTheOthers) {
  TempDir dir;
  const std::string fifo = make_fifo(dir / "rank0_pid");
  // Rank 1 goes on only after the launcher reaped rank 0 (kill -0 fails from then on;
  // polled with a bound of 10 s).
  const std::string script = "if [ \"$RANK\" = 0 ]; then echo $$ > '" + fifo +
                             "'; exit 0; fi; read pid < '" + fifo +
                             "'; i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 1000 ]; do "
                             "sleep 0.01; i=$((i+1)); done; echo still here after $i";
  const LaunchResult result = launch(sh_ranks(2, script), dir);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("[rank 1] still here after "), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("still here after 1000"), std::string::npos) << "rank 0 not reaped";
}

}  // namespace
}  // namespace zt::launch::testing
